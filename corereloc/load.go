package corereloc

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Relocation is one CO-RE relocation record of an object's .BTF.ext.
type Relocation struct {
	Object   string     // path of the object, as given to Load
	Section  string     // ELF section of the instruction ("kprobe/do_exit", ".text")
	Program  string     // function symbol holding the instruction, "" if none
	InsnOff  uint32     // byte offset of the instruction in Section
	TypeID   btf.TypeID // local type, an ID in the object's .BTF
	TypeName string     // name of the local type ("task_struct___old")
	Access   string     // access string ("0:1:2"), "0" for type kinds
	Kind     Kind

	accessor []int // Access parsed
}

func (r *Relocation) String() string {
	return fmt.Sprintf("%s %s+%d (%s) %s %s %s", r.Object, r.Section, r.InsnOff, r.Program, r.Kind, r.TypeName, r.Access)
}

// Object is a BPF ELF object's byte order, its BTF and its CO-RE
// relocations, section by section as in .BTF.ext, by instruction offset
// within a section.
type Object struct {
	Path        string
	ByteOrder   binary.ByteOrder
	Relocations []Relocation

	btf *rawbtf.Spec // nil if the object has no .BTF
}

// Load reads the CO-RE relocations of the BPF ELF objects at paths. An
// object without .BTF.ext, or whose .BTF.ext holds no CO-RE relocations,
// has none; that is not an error.
func Load(paths ...string) ([]*Object, error) {
	objs := make([]*Object, 0, len(paths))
	for _, path := range paths {
		obj, err := loadFile(path)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

func loadFile(path string) (*Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadReader(path, f)
}

// LoadReader reads the CO-RE relocations of one BPF ELF object from r;
// name identifies it in Relocation.Object and in errors.
func LoadReader(name string, r io.ReaderAt) (obj *Object, err error) {
	defer func() {
		// debug/elf panics on some malformed inputs.
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("%s: malformed ELF: %v", name, p)
		}
	}()
	obj, err = loadELF(name, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return obj, nil
}

func loadELF(name string, r io.ReaderAt) (*Object, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("read ELF: %w", err)
	}
	if f.Machine != elf.EM_BPF {
		// A kernel, a library or a host program given by mistake would
		// otherwise load as an object without relocations.
		return nil, fmt.Errorf("not a BPF object: ELF machine %v, want EM_BPF", f.Machine)
	}
	obj := &Object{Path: name, ByteOrder: f.ByteOrder}

	size := int64(-1)
	if s, ok := r.(interface{ Size() int64 }); ok {
		size = s.Size()
	} else if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
		}
	}
	btfSec, err := section(f, ".BTF", size)
	if err != nil {
		return nil, err
	}
	extSec, err := section(f, ".BTF.ext", size)
	if err != nil {
		return nil, err
	}
	if btfSec == nil {
		if extSec != nil {
			return nil, errors.New("section .BTF.ext without .BTF")
		}
		return obj, nil
	}
	btfData, err := btfSec.Data()
	if err != nil {
		return nil, fmt.Errorf("section .BTF: %w", err)
	}
	obj.btf, err = rawbtf.Parse(btfData, nil)
	if err != nil {
		return nil, fmt.Errorf("section .BTF: %w", err)
	}
	if obj.btf.ByteOrder() != f.ByteOrder {
		return nil, fmt.Errorf("section .BTF: byte order %v differs from the ELF's %v", obj.btf.ByteOrder(), f.ByteOrder)
	}
	if extSec == nil {
		return obj, nil
	}
	obj.Relocations, err = parseBTFExt(name, extSec, f.ByteOrder, obj.btf)
	if err != nil {
		return nil, fmt.Errorf("section .BTF.ext: %w", err)
	}
	funcs, err := functions(f)
	if err != nil {
		return nil, err
	}
	for i := range obj.Relocations {
		r := &obj.Relocations[i]
		syms := funcs[r.Section]
		// The last function starting at or before the instruction.
		j, found := slices.BinarySearchFunc(syms, r.InsnOff, func(s funcSym, off uint32) int { return cmp.Compare(s.off, off) })
		if !found {
			j--
		}
		if j >= 0 {
			r.Program = syms[j].name
		}
	}
	return obj, nil
}

type funcSym struct {
	off  uint32
	name string
}

// functions lists the function symbols of each section by offset.
func functions(f *elf.File) (map[string][]funcSym, error) {
	syms, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	out := make(map[string][]funcSym)
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || int(s.Section) >= len(f.Sections) || s.Section == elf.SHN_UNDEF {
			continue
		}
		sec := f.Sections[s.Section].Name
		out[sec] = append(out[sec], funcSym{uint32(s.Value), s.Name})
	}
	for _, fs := range out {
		slices.SortFunc(fs, func(a, b funcSym) int { return cmp.Compare(a.off, b.off) })
	}
	return out, nil
}

// section returns the named section, nil if absent, checking it has data.
// fileSize, if not negative, bounds the section.
func section(f *elf.File, name string, fileSize int64) (*elf.Section, error) {
	sec := f.Section(name)
	if sec == nil {
		return nil, nil
	}
	if sec.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("section %s: no data", name)
	}
	if fileSize >= 0 && (sec.Offset > uint64(fileSize) || sec.Size > uint64(fileSize)-sec.Offset) {
		return nil, fmt.Errorf("section %s: offset %d size %d beyond the file's %d bytes", name, sec.Offset, sec.Size, fileSize)
	}
	return sec, nil
}

// .BTF.ext layout (struct btf_ext_header in tools/lib/bpf/libbpf_internal.h):
// magic u16 (BTF's), version u8, flags u8, hdr_len u32, func_info_off/len,
// line_info_off/len, then, if hdr_len covers them, core_relo_off/len.
// Offsets count from the end of the header.
const (
	extHeaderMinLen  = 24
	extHeaderCORELen = 32
	coreReloSize     = 16 // struct bpf_core_relo: insn_off, type_id, access_str_off, kind
)

// parseBTFExt reads the CO-RE relocations of section .BTF.ext. It reads
// the header and the core_relo subsection only: func_info and line_info,
// most of the section in big objects, are not needed.
func parseBTFExt(name string, sec *elf.Section, bo binary.ByteOrder, spec *rawbtf.Spec) ([]Relocation, error) {
	r, ok := sec.Open().(io.ReaderAt)
	if !ok { // a compressed section
		data, err := sec.Data()
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(data)
	}
	secLen := sec.Size
	data := make([]byte, min(secLen, extHeaderCORELen))
	if _, err := r.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("offset 0: header: %w", err)
	}
	if len(data) < extHeaderMinLen {
		return nil, fmt.Errorf("offset 0: header: %w", io.ErrUnexpectedEOF)
	}
	if magic := bo.Uint16(data); magic != rawbtf.Magic {
		return nil, fmt.Errorf("offset 0: bad magic %#x", magic)
	}
	if v := data[2]; v != 1 {
		return nil, fmt.Errorf("offset 2: unsupported version %d", v)
	}
	if fl := data[3]; fl != 0 {
		return nil, fmt.Errorf("offset 3: unsupported flags %#x", fl)
	}
	hdrLen := bo.Uint32(data[4:])
	if hdrLen < extHeaderMinLen || uint64(hdrLen) > secLen {
		return nil, fmt.Errorf("offset 4: header length %d out of range [%d, %d]", hdrLen, extHeaderMinLen, secLen)
	}
	if hdrLen < extHeaderCORELen {
		return nil, nil // written before CO-RE relocations existed
	}
	off, size := bo.Uint32(data[24:]), bo.Uint32(data[28:])
	if size == 0 {
		return nil, nil
	}
	start := uint64(hdrLen) + uint64(off)
	end := start + uint64(size)
	if end > secLen {
		return nil, fmt.Errorf("offset 24: core_relo [%d, %d) beyond the section's %d bytes", start, end, secLen)
	}
	sub := make([]byte, size)
	if _, err := r.ReadAt(sub, int64(start)); err != nil {
		return nil, fmt.Errorf("offset %d: core_relo: %w", start, err)
	}
	pos := func(p int) uint64 { return start + uint64(p) }

	if len(sub) < 4 {
		return nil, fmt.Errorf("offset %d: core_relo record size: %w", pos(0), io.ErrUnexpectedEOF)
	}
	if rs := bo.Uint32(sub); rs != coreReloSize {
		return nil, fmt.Errorf("offset %d: core_relo record size %d, want %d", pos(0), rs, coreReloSize)
	}
	// Count first: big objects have tens of thousands of relocations, and
	// growing the slice would allocate several times their size.
	total := uint64(0)
	for p := 4; p < len(sub); {
		if len(sub)-p < 8 {
			return nil, fmt.Errorf("offset %d: core_relo section header: %w", pos(p), io.ErrUnexpectedEOF)
		}
		n := uint64(bo.Uint32(sub[p+4:]))
		p += 8
		if n*coreReloSize > uint64(len(sub)-p) {
			return nil, fmt.Errorf("offset %d: %d records: %w", pos(p), n, io.ErrUnexpectedEOF)
		}
		total += n
		p += int(n * coreReloSize)
	}
	relos := make([]Relocation, 0, total)
	// The same access and type recur in many programs: parse each access
	// string and look up each type's name once.
	accessors := make(map[uint32]parsedAccess)
	typeNames := make(map[btf.TypeID]string)
	var order []int32
	for p := 4; p < len(sub); {
		secName, err := spec.String(bo.Uint32(sub[p:]))
		if err != nil {
			return nil, fmt.Errorf("offset %d: section name: %w", pos(p), err)
		}
		if secName == "" {
			return nil, fmt.Errorf("offset %d: empty section name", pos(p))
		}
		n := int(bo.Uint32(sub[p+4:]))
		p += 8
		// clang does not write them in instruction order: sort the
		// records, smaller than the relocations made of them.
		recs := sub[p : p+n*coreReloSize]
		order = order[:0]
		for i := range n {
			order = append(order, int32(i))
		}
		slices.SortStableFunc(order, func(a, b int32) int {
			return cmp.Compare(bo.Uint32(recs[a*coreReloSize:]), bo.Uint32(recs[b*coreReloSize:]))
		})
		for _, i := range order {
			at := int(i) * coreReloSize
			r, err := parseRelo(name, secName, recs[at:at+coreReloSize], bo, spec, accessors, typeNames)
			if err != nil {
				return nil, fmt.Errorf("offset %d: section %s: %w", pos(p+at), secName, err)
			}
			relos = append(relos, r)
		}
		p += n * coreReloSize
	}
	return relos, nil
}

// parsedAccess is an access string and its parsed indices.
type parsedAccess struct {
	s   string
	acc []int
}

// parseRelo reads one bpf_core_relo record. accessors caches access
// strings by offset, relocations share the cached indices, read-only;
// typeNames caches local type names.
func parseRelo(obj, sec string, b []byte, bo binary.ByteOrder, spec *rawbtf.Spec, accessors map[uint32]parsedAccess, typeNames map[btf.TypeID]string) (Relocation, error) {
	r := Relocation{
		Object:  obj,
		Section: sec,
		InsnOff: bo.Uint32(b),
		TypeID:  btf.TypeID(bo.Uint32(b[4:])),
		Kind:    Kind(bo.Uint32(b[12:])),
	}
	if !r.Kind.valid() {
		return r, fmt.Errorf("instruction %d: unknown relocation kind %d", r.InsnOff, uint32(r.Kind))
	}
	if r.InsnOff%8 != 0 {
		return r, fmt.Errorf("instruction offset %d not a multiple of 8", r.InsnOff)
	}
	var ok bool
	if r.TypeName, ok = typeNames[r.TypeID]; !ok {
		t, err := spec.Type(rawbtf.TypeID(r.TypeID))
		if err != nil {
			return r, fmt.Errorf("instruction %d: local type: %w", r.InsnOff, err)
		}
		r.TypeName = t.Name
		typeNames[r.TypeID] = t.Name
	}
	off := bo.Uint32(b[8:])
	a, ok := accessors[off]
	if !ok {
		var err error
		a.s, err = spec.String(off)
		if err != nil {
			return r, fmt.Errorf("instruction %d: access string: %w", r.InsnOff, err)
		}
		a.acc, err = parseAccessor(a.s)
		if err != nil {
			return r, fmt.Errorf("instruction %d: %w", r.InsnOff, err)
		}
		accessors[off] = a
	}
	r.Access, r.accessor = a.s, a.acc
	return r, nil
}

// parseAccessor splits an access string ("0:1:3") into its indices.
func parseAccessor(s string) ([]int, error) {
	if s == "" {
		return nil, errors.New("empty access string")
	}
	parts := strings.Split(s, ":")
	acc := make([]int, len(parts))
	for i, p := range parts {
		// 31 bits, as cilium/ebpf, so an index always fits an int.
		v, err := strconv.ParseUint(p, 10, 31)
		if err != nil {
			return nil, fmt.Errorf("access string %q: index %q: %w", s, p, err)
		}
		acc[i] = int(v)
	}
	return acc, nil
}

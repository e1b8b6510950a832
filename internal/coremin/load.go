package coremin

import (
	"bufio"
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
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Relocation is a distinct CO-RE relocation of an object: a local type, an
// access and a kind, which is all its fixup on a candidate depends on.
// Big objects inline the same access into hundreds of functions (one
// agent has 34,753 relocation records over 371 distinct relocations), so
// an Object holds each once and lists where it occurs as Sites.
type Relocation struct {
	TypeID   btf.TypeID // local type, an ID in the object's .BTF
	TypeName string     // name of the local type ("task_struct___old")
	Access   string     // access string ("0:1:2"), "0" for type kinds
	Kind     Kind

	accessor []int // Access parsed
}

func (r *Relocation) String() string {
	return fmt.Sprintf("%s %s %s", r.Kind, r.TypeName, r.Access)
}

// Function is a function of an object that holds relocated instructions:
// cilium/ebpf relocates a program in one call and libbpf scores candidates
// per program, so a relocation's outcome depends on its function.
type Function struct {
	Section string // ELF section ("kprobe/do_exit", ".text")
	Name    string // function symbol holding the instructions, "" if none

	off uint32 // the symbol's offset in Section, 0 if none
}

// Site is one relocated instruction, one record of .BTF.ext: 12 bytes,
// where the relocation and function it names are stored once per object.
type Site struct {
	InsnOff    uint32 // byte offset of the instruction in its section
	Function   int32  // index in Object.Functions
	Relocation int32  // index in Object.Relocations
}

// Object is a BPF ELF object's byte order, its BTF and its CO-RE
// relocations.
type Object struct {
	Path      string
	ByteOrder binary.ByteOrder
	// Sites are the relocated instructions, section by section as in
	// .BTF.ext, by instruction offset within a section: the sites of a
	// function are adjacent (if .BTF.ext lists a section twice, a
	// function's later records join its first ones).
	Sites []Site
	// Relocations are the distinct relocations, in the order .BTF.ext
	// first names them.
	Relocations []Relocation
	// Functions are the functions holding sites, in order of first site.
	Functions []Function

	btf *rawbtf.Spec // nil if the object has no .BTF
	// collection is the object as cilium/ebpf loads it, read on first
	// use: the oracle needs it, Match and Minimize do not, and for a big
	// object it costs more than all of Load.
	collection func() (*ebpf.CollectionSpec, error)
	// memo keeps what is derived from the object alone and asked again
	// for every kernel.
	memo *memo
}

// memo is what an Object's methods derive from it alone, kept across
// the kernels of a run, which ask the same questions of it: on the big
// test object, walking each program and describing relocations anew per
// kernel took a fifth of a cold generate's CPU.
type memo struct {
	index     func() *siteIndex // sites by function and offset
	names     func() []string   // the essential names of the local types
	programs  sync.Map          // *ebpf.ProgramSpec → []ProgramRelocation
	described sync.Map          // *Relocation → string
}

// Collection is the object as cilium/ebpf's ebpf.LoadCollectionSpec
// reads it, loaded on the first call and kept: what the oracle relocates
// and what a caller predicting loads walks.
func (o *Object) Collection() (*ebpf.CollectionSpec, error) {
	if o.collection == nil {
		return nil, fmt.Errorf("%s: not loaded by Load or LoadFromReader", o.Path)
	}
	return o.collection()
}

// SiteString describes site j for messages: object, section and offset,
// function, and the relocation.
func (o *Object) SiteString(j int) string {
	s := o.Sites[j]
	f, r := &o.Functions[s.Function], &o.Relocations[s.Relocation]
	return fmt.Sprintf("%s %s+%d (%s) %s %s %s", o.Path, f.Section, s.InsnOff, f.Name, r.Kind, r.TypeName, r.Access)
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
	obj, err := LoadFromReader(path, f)
	if err != nil {
		return nil, err
	}
	obj.collection = lazyCollection(path, func() (*ebpf.CollectionSpec, error) { return ebpf.LoadCollectionSpec(path) })
	return obj, nil
}

// lazyCollection loads object name with cilium/ebpf on the first call.
func lazyCollection(name string, load func() (*ebpf.CollectionSpec, error)) func() (*ebpf.CollectionSpec, error) {
	return sync.OnceValues(func() (*ebpf.CollectionSpec, error) {
		coll, err := load()
		if err != nil {
			return nil, fmt.Errorf("load %s with cilium/ebpf: %w", name, err)
		}
		return coll, nil
	})
}

// LoadFromReader reads the CO-RE relocations of one BPF ELF object from
// r; name identifies it in Object.Path and in errors. Object.Collection
// reads r again: it must stay readable while the object is in use.
func LoadFromReader(name string, r io.ReaderAt) (obj *Object, err error) {
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
	obj.collection = lazyCollection(name, func() (*ebpf.CollectionSpec, error) { return ebpf.LoadCollectionSpecFromReader(r) })
	return obj, nil
}

func loadELF(name string, r io.ReaderAt) (*Object, error) {
	// A text file or an archive given by mistake is told as such, rather
	// than by how debug/elf fails on it ("EOF").
	var magic [len(elf.ELFMAG)]byte
	if n, _ := r.ReadAt(magic[:], 0); n < len(magic) || string(magic[:]) != elf.ELFMAG {
		return nil, errors.New("not an ELF file: want a BPF object (clang -target bpf, bpf2go)")
	}
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
	obj.memo = &memo{index: sync.OnceValue(obj.newSiteIndex), names: sync.OnceValue(obj.essentialNames)}

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
	funcs, err := functions(f)
	if err != nil {
		return nil, err
	}
	if err := obj.parseBTFExt(extSec, funcs); err != nil {
		return nil, fmt.Errorf("section .BTF.ext: %w", err)
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

// parseBTFExt reads the CO-RE relocations of section .BTF.ext into
// o.Sites, o.Relocations and o.Functions; funcs are the function symbols
// of each section by offset. It reads the header and the core_relo
// subsection only: func_info and line_info, most of the section in big
// objects, are not needed.
func (o *Object) parseBTFExt(sec *elf.Section, funcs map[string][]funcSym) error {
	bo := o.ByteOrder
	r, ok := sec.Open().(io.ReaderAt)
	if !ok { // a compressed section
		data, err := sec.Data()
		if err != nil {
			return err
		}
		r = bytes.NewReader(data)
	}
	secLen := sec.Size
	data := make([]byte, min(secLen, extHeaderCORELen))
	if _, err := r.ReadAt(data, 0); err != nil {
		return fmt.Errorf("offset 0: header: %w", err)
	}
	if len(data) < extHeaderMinLen {
		return fmt.Errorf("offset 0: header: %w", io.ErrUnexpectedEOF)
	}
	if magic := bo.Uint16(data); magic != rawbtf.Magic {
		return fmt.Errorf("offset 0: bad magic %#x", magic)
	}
	if v := data[2]; v != 1 {
		return fmt.Errorf("offset 2: unsupported version %d", v)
	}
	if fl := data[3]; fl != 0 {
		return fmt.Errorf("offset 3: unsupported flags %#x", fl)
	}
	hdrLen := bo.Uint32(data[4:])
	if hdrLen < extHeaderMinLen || uint64(hdrLen) > secLen {
		return fmt.Errorf("offset 4: header length %d out of range [%d, %d]", hdrLen, extHeaderMinLen, secLen)
	}
	if hdrLen < extHeaderCORELen {
		return nil // written before CO-RE relocations existed
	}
	off, size := bo.Uint32(data[24:]), bo.Uint32(data[28:])
	if size == 0 {
		return nil
	}
	start := uint64(hdrLen) + uint64(off)
	end := start + uint64(size)
	if end > secLen {
		return fmt.Errorf("offset 24: core_relo [%d, %d) beyond the section's %d bytes", start, end, secLen)
	}
	// The subsection is read twice through a small buffer, to count the
	// records and then to parse them a section at a time: big objects
	// have tens of thousands of records, and neither reading it whole
	// nor growing the sites should leave garbage several times the size
	// of the sites kept.
	sr := io.NewSectionReader(r, int64(start), int64(size))
	br := bufio.NewReaderSize(sr, int(min(size, 16<<10)))
	p := uint64(0) // position in the subsection
	read := func(b []byte, what string) error {
		if _, err := io.ReadFull(br, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("offset %d: %s: %w", start+p, what, err)
		}
		return nil
	}
	var hdr [8]byte
	if err := read(hdr[:4], "core_relo record size"); err != nil {
		return err
	}
	if rs := bo.Uint32(hdr[:]); rs != coreReloSize {
		return fmt.Errorf("offset %d: core_relo record size %d, want %d", start, rs, coreReloSize)
	}
	total := uint64(0)
	for p = 4; p < uint64(size); {
		if uint64(size)-p < 8 {
			return fmt.Errorf("offset %d: core_relo section header: %w", start+p, io.ErrUnexpectedEOF)
		}
		if err := read(hdr[:], "core_relo section header"); err != nil {
			return err
		}
		n := uint64(bo.Uint32(hdr[4:]))
		p += 8
		if n*coreReloSize > uint64(size)-p {
			return fmt.Errorf("offset %d: %d records: %w", start+p, n, io.ErrUnexpectedEOF)
		}
		if _, err := br.Discard(int(n * coreReloSize)); err != nil {
			return fmt.Errorf("offset %d: %d records: %w", start+p, n, err)
		}
		total += n
		p += n * coreReloSize
	}

	o.Sites = make([]Site, 0, total)
	x := extParser{obj: o, relos: make(map[reloKey]int32), accessors: make(map[uint32][]int), funcs: make(map[Function]int32)}
	if _, err := sr.Seek(4, io.SeekStart); err != nil {
		return fmt.Errorf("offset %d: core_relo: %w", start, err)
	}
	br.Reset(sr)
	var recs []byte
	var order []int32
	seen := make(map[string]bool)
	regroup := false
	for p = 4; p < uint64(size); {
		if err := read(hdr[:], "core_relo section header"); err != nil {
			return err
		}
		secName, err := o.btf.String(bo.Uint32(hdr[:]))
		if err != nil {
			return fmt.Errorf("offset %d: section name: %w", start+p, err)
		}
		if secName == "" {
			return fmt.Errorf("offset %d: empty section name", start+p)
		}
		regroup = regroup || seen[secName]
		seen[secName] = true
		n := int(bo.Uint32(hdr[4:]))
		p += 8
		if uint64(n)*coreReloSize > uint64(size)-p {
			// Counted before: the file changed under us.
			return fmt.Errorf("offset %d: %d records: %w", start+p, n, io.ErrUnexpectedEOF)
		}
		recs = slices.Grow(recs[:0], n*coreReloSize)[:n*coreReloSize]
		if err := read(recs, "core_relo records"); err != nil {
			return err
		}
		// clang does not write them in instruction order: sort the
		// records, smaller than the sites made of them.
		order = order[:0]
		for i := range n {
			order = append(order, int32(i))
		}
		slices.SortStableFunc(order, func(a, b int32) int {
			return cmp.Compare(bo.Uint32(recs[a*coreReloSize:]), bo.Uint32(recs[b*coreReloSize:]))
		})
		x.section(secName, funcs[secName])
		for _, i := range order {
			at := int(i) * coreReloSize
			if err := x.record(recs[at : at+coreReloSize]); err != nil {
				return fmt.Errorf("offset %d: section %s: %w", start+p+uint64(at), secName, err)
			}
		}
		p += uint64(n * coreReloSize)
	}
	if regroup {
		// Functions are numbered in order of first site.
		slices.SortStableFunc(o.Sites, func(a, b Site) int {
			return cmp.Or(cmp.Compare(a.Function, b.Function), cmp.Compare(a.InsnOff, b.InsnOff))
		})
	}
	return nil
}

// reloKey identifies a distinct relocation of an object in its records:
// local type, access string offset and kind.
type reloKey struct {
	typ    btf.TypeID
	access uint32
	kind   Kind
}

// extParser turns core_relo records into an Object's sites, numbering
// distinct relocations and functions as they come.
type extParser struct {
	obj       *Object
	relos     map[reloKey]int32
	accessors map[uint32][]int // parsed access strings by offset, shared read-only
	funcs     map[Function]int32

	// The section being read: its name, function symbols by offset, and
	// the last function found, which most records share.
	sec     string
	syms    []funcSym
	lastSym int
	lastFn  int32
}

// section starts the records of section name, whose function symbols by
// offset are syms.
func (x *extParser) section(name string, syms []funcSym) {
	x.sec, x.syms, x.lastSym, x.lastFn = name, syms, -2, -1
}

// record reads one bpf_core_relo record of the current section.
func (x *extParser) record(b []byte) error {
	bo, spec := x.obj.ByteOrder, x.obj.btf
	insn := bo.Uint32(b)
	k := reloKey{typ: btf.TypeID(bo.Uint32(b[4:])), access: bo.Uint32(b[8:]), kind: Kind(bo.Uint32(b[12:]))}
	if !k.kind.valid() {
		return fmt.Errorf("instruction %d: unknown relocation kind %d", insn, uint32(k.kind))
	}
	if insn%8 != 0 {
		return fmt.Errorf("instruction offset %d not a multiple of 8", insn)
	}
	u, ok := x.relos[k]
	if !ok {
		t, err := spec.Type(rawbtf.TypeID(k.typ))
		if err != nil {
			return fmt.Errorf("instruction %d: local type: %w", insn, err)
		}
		s, err := spec.String(k.access)
		if err != nil {
			return fmt.Errorf("instruction %d: access string: %w", insn, err)
		}
		acc, ok := x.accessors[k.access]
		if !ok {
			if acc, err = parseAccessor(s); err != nil {
				return fmt.Errorf("instruction %d: %w", insn, err)
			}
			x.accessors[k.access] = acc
		}
		u = int32(len(x.obj.Relocations))
		x.relos[k] = u
		x.obj.Relocations = append(x.obj.Relocations, Relocation{TypeID: k.typ, TypeName: t.Name, Access: s, Kind: k.kind, accessor: acc})
	}
	x.obj.Sites = append(x.obj.Sites, Site{InsnOff: insn, Function: x.function(insn), Relocation: u})
	return nil
}

// function numbers the function holding instruction insn of the current
// section: the last function symbol starting at or before it. Records
// come by offset, so the numbering map is consulted only where the symbol
// changes.
func (x *extParser) function(insn uint32) int32 {
	j, found := slices.BinarySearchFunc(x.syms, insn, func(s funcSym, off uint32) int { return cmp.Compare(s.off, off) })
	if !found {
		j--
	}
	if j == x.lastSym {
		return x.lastFn
	}
	f := Function{Section: x.sec}
	if j >= 0 {
		f.Name, f.off = x.syms[j].name, x.syms[j].off
	}
	id, ok := x.funcs[f]
	if !ok {
		id = int32(len(x.obj.Functions))
		x.funcs[f] = id
		x.obj.Functions = append(x.obj.Functions, f)
	}
	x.lastSym, x.lastFn = j, id
	return id
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

// Package btfload gives cilium/ebpf a kernel's raw BTF that is already in
// memory with one copy instead of io.ReadAll's several (Spec), or reads a
// raw BTF file once, into the buffer cilium/ebpf keeps (File).
//
// btf.LoadSpecFromReader reads raw BTF with io.ReadAll, which reads into a
// chain of growing chunks and then copies them into a buffer of the final
// size: for a 5 MB kernel that is about 10 MB of fresh memory and two
// copies. A generate run loads every kernel's full BTF that way for the
// oracle and the load prediction, and on a 12-kernel run the ReadAll was
// a fifth of the CPU, most of it faulting in that memory. The same call
// reads an ELF file's .BTF section into one buffer of the section's size.
// So Spec shows cilium/ebpf the blob as the only section of a small ELF
// file: the ELF's header and tables are a few hundred bytes beside the
// blob, and ReadAt serves every range from where it lives, without
// copying the blob first: from memory for Spec, from the file for File.
//
// Through ELF, cilium/ebpf differs from raw BTF in one respect: it fills
// in a data section whose BTF size is zero from the ELF's section and
// symbol tables (as a BPF object's .data needs), and fails when the ELF
// has no such section. Kernels give their data sections sizes; a blob
// with an empty one is loaded the plain way. The other difference is
// that Spec's TypeByID then records the data sections it has seen in a
// map without a lock, so a Spec from here must not be used by several
// goroutines at once (the generator uses each kernel's from one).
package btfload

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Spec loads standalone raw BTF as btf.LoadSpecFromReader does, with one
// copy of raw. index is raw's rawbtf index, which says whether a data
// section is empty, or nil: Spec then parses raw for it. raw is not
// retained.
func Spec(raw []byte, index *rawbtf.Spec) (*btf.Spec, error) {
	if index == nil {
		var err error
		if index, err = rawbtf.Parse(raw, nil); err != nil {
			// cilium/ebpf says why, the plain way.
			return btf.LoadSpecFromReader(bytes.NewReader(raw))
		}
	}
	o, ok := index.ByteOrder().(order)
	if !ok || emptyDatasec(index) {
		return btf.LoadSpecFromReader(bytes.NewReader(raw))
	}
	return btf.LoadSpecFromReader(newWrapper(bytes.NewReader(raw), int64(len(raw)), o))
}

// emptyDatasec reports whether s has a data section of size zero.
func emptyDatasec(s *rawbtf.Spec) bool {
	for _, id := range s.Datasecs() {
		if t, err := s.Type(id); err != nil || t.Size() == 0 {
			return true
		}
	}
	return false
}

// order is what binary.LittleEndian and binary.BigEndian both are.
type order interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// The wrapper's layout: the ELF header, raw as section 1 (.BTF), the
// tables (an empty symbol table with its string table, then the section
// names) and the section headers.
const (
	ehdrSize = 64
	shdrSize = 64
	symSize  = 24
)

// shstrtab holds the section names at the offsets the headers give.
const shstrtab = "\x00.BTF\x00.symtab\x00.strtab\x00.shstrtab\x00"

const (
	nameBTF      = 1
	nameSymtab   = 6
	nameStrtab   = 14
	nameShstrtab = 22
)

// wrapper is an io.ReaderAt over head, the n bytes of blob and tail laid
// end to end.
type wrapper struct {
	head, tail []byte
	blob       io.ReaderAt
	n          int64
	// whole is the buffer a single ReadAt read the whole blob into:
	// cilium/ebpf's own copy of it (see File).
	whole []byte
}

func newWrapper(blob io.ReaderAt, n int64, bo order) *wrapper {
	tablesOff := ehdrSize + uint64(n)
	pad := (8 - tablesOff%8) % 8
	symOff := tablesOff + pad
	strOff := symOff + symSize
	shstrOff := strOff + 1
	end := shstrOff + uint64(len(shstrtab))
	shOff := (end + 7) &^ 7

	tail := make([]byte, pad+symSize) // padding, the null symbol
	tail = append(tail, 0)            // .strtab
	tail = append(tail, shstrtab...)
	tail = append(tail, make([]byte, shOff-end)...)
	section := func(name uint32, typ elf.SectionType, off, size uint64, link uint32, entsize uint64) {
		tail = bo.AppendUint32(tail, name)
		tail = bo.AppendUint32(tail, uint32(typ))
		tail = bo.AppendUint64(tail, 0) // flags
		tail = bo.AppendUint64(tail, 0) // address
		tail = bo.AppendUint64(tail, off)
		tail = bo.AppendUint64(tail, size)
		tail = bo.AppendUint32(tail, link)
		tail = bo.AppendUint32(tail, 0) // info
		tail = bo.AppendUint64(tail, 1) // alignment
		tail = bo.AppendUint64(tail, entsize)
	}
	section(0, elf.SHT_NULL, 0, 0, 0, 0)
	section(nameBTF, elf.SHT_PROGBITS, ehdrSize, uint64(n), 0, 0)
	section(nameSymtab, elf.SHT_SYMTAB, symOff, symSize, 3, symSize)
	section(nameStrtab, elf.SHT_STRTAB, strOff, 1, 0, 0)
	section(nameShstrtab, elf.SHT_STRTAB, shstrOff, uint64(len(shstrtab)), 0, 0)

	data := elf.ELFDATA2LSB
	if bo.Uint16([]byte{0, 1}) == 1 {
		data = elf.ELFDATA2MSB
	}
	head := []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(data), byte(elf.EV_CURRENT), 0}
	head = append(head, make([]byte, 8)...)
	head = bo.AppendUint16(head, uint16(elf.ET_REL))
	head = bo.AppendUint16(head, uint16(elf.EM_BPF))
	head = bo.AppendUint32(head, uint32(elf.EV_CURRENT))
	head = bo.AppendUint64(head, 0) // entry
	head = bo.AppendUint64(head, 0) // program headers
	head = bo.AppendUint64(head, shOff)
	head = bo.AppendUint32(head, 0) // flags
	head = bo.AppendUint16(head, ehdrSize)
	head = bo.AppendUint16(head, 0) // program header size
	head = bo.AppendUint16(head, 0) // program headers
	head = bo.AppendUint16(head, shdrSize)
	head = bo.AppendUint16(head, 5) // sections
	head = bo.AppendUint16(head, 4) // section names
	return &wrapper{head: head, tail: tail, blob: blob, n: n}
}

func (w *wrapper) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read at %d: negative offset", off)
	}
	n := 0
	if off < int64(len(w.head)) {
		n = copy(p, w.head[off:])
		off = int64(len(w.head))
	}
	if blobOff := off - int64(len(w.head)); n < len(p) && blobOff < w.n {
		want := p[n:min(len(p), n+int(w.n-blobOff))]
		m, err := w.blob.ReadAt(want, blobOff)
		if m < len(want) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF // the file shrank
			}
			return n + m, err
		}
		if blobOff == 0 && int64(len(want)) == w.n {
			w.whole = want
		}
		n += m
		off += int64(m)
	}
	if tailOff := off - int64(len(w.head)) - w.n; n < len(p) && tailOff < int64(len(w.tail)) {
		n += copy(p[n:], w.tail[tailOff:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
)

// Payload layout (all integers little endian, "uv" is an unsigned varint):
//
//	0   [8]byte  magic "BTFEMBED"
//	8   u32      format version (formatVersion)
//	12  u32      CRC-32C (Castagnoli) of every byte from offset 16 to the end
//	16  u32      length n of the index frame
//	20  u32      length of the decompressed index
//	24  [n]byte  index: one zstd frame
//	24+n         data: dictionaries and blobs, addressed relative to here
//
// The decompressed index:
//
//	uv count, then per string:      uv length, bytes
//	uv count, then per dictionary:  uv offset, uv stored length, uv length,
//	                                uv base dictionary+1 (0: none)
//	uv count, then per blob:        uv codec, uv dictionary+1 (0: none),
//	                                uv offset, uv stored length,
//	                                uv packed length, uv length
//	uv count, then per entry:       uv arch, release, distro, version (string
//	                                indexes), uv vmlinux blob, uv modules,
//	                                then per module: uv name (string index),
//	                                uv base blob+1 (0: none), uv split blob
//
// A dictionary is a zstd frame whose content is the concatenation of the
// packed forms of some blobs (its representatives). It may be compressed
// with an earlier dictionary (its base, itself without a base) as raw
// content, zstd dictionary ID = base index + 1. A blob's stored bytes
// decode, by codec, to its packed form; the packed form is the raw blob
// when its packed length is 0, and the BTF column transform of
// btfcodec.go otherwise. Codecs:
//
//	codecStored  the stored bytes are the packed form
//	codecZstd    a zstd frame, compressed with the blob's dictionary as
//	             raw content (zstd dictionary ID = dictionary index + 1)
//	codecSlice   the packed form is dictionary content [offset, offset+length)
//
// Magic starts every payload, so tools can tell one from BTF.
const Magic = "BTFEMBED"

const (
	formatVersion = 1
	fixedHeader   = 24

	codecStored = 0
	codecZstd   = 1
	codecSlice  = 2

	// maxBlobLen bounds any single decoded blob or dictionary (a full
	// vmlinux BTF is 5-6 MB) so a corrupt length cannot ask for an
	// absurd allocation.
	maxBlobLen = 256 << 20
)

// ErrCorrupt is wrapped by every error about a malformed payload.
var ErrCorrupt = errors.New("corrupt btfembed payload")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Module is the BTF of one kernel module, kept for an entry.
type Module struct {
	// Name is the module name as in /sys/kernel/btf/<name>.
	Name string
	// Base is distilled base BTF describing the vmlinux types Split
	// refers to, so Split can be relocated onto another vmlinux. Nil
	// means Split refers directly to the entry's VMLinux.
	Base []byte
	// Split is the module's split BTF.
	Split []byte
}

// Entry is the embedded BTF of one kernel.
type Entry struct {
	Key Key
	// VMLinux is raw (minimized) vmlinux BTF.
	VMLinux []byte
	// Modules may be empty.
	Modules []Module
}

// wireBlob is a blob's index record.
type wireBlob struct {
	codec     uint64
	dict      uint64 // dictionary index + 1, 0 for none
	off, n    uint64 // stored bytes (data area, or dictionary content for codecSlice)
	packedLen uint64 // 0: not packed
	rawLen    uint64
}

// wireDict is a dictionary's index record.
type wireDict struct {
	off, n, rawLen uint64
	base           uint64 // dictionary index + 1, 0 for none
}

type wireModule struct {
	name, base, split uint64 // base is blob+1, 0 for none
}

type wireEntry struct {
	key     [4]uint64 // string indexes: arch, release, distro, version
	vmlinux uint64
	modules []wireModule
}

type wireIndex struct {
	strings []string
	dicts   []wireDict
	blobs   []wireBlob
	entries []wireEntry
}

func (ix *wireIndex) marshal() []byte {
	var b []byte
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	u(uint64(len(ix.strings)))
	for _, s := range ix.strings {
		u(uint64(len(s)))
		b = append(b, s...)
	}
	u(uint64(len(ix.dicts)))
	for _, d := range ix.dicts {
		u(d.off)
		u(d.n)
		u(d.rawLen)
		u(d.base)
	}
	u(uint64(len(ix.blobs)))
	for _, bl := range ix.blobs {
		for _, v := range []uint64{bl.codec, bl.dict, bl.off, bl.n, bl.packedLen, bl.rawLen} {
			u(v)
		}
	}
	u(uint64(len(ix.entries)))
	for _, e := range ix.entries {
		for _, v := range e.key {
			u(v)
		}
		u(e.vmlinux)
		u(uint64(len(e.modules)))
		for _, m := range e.modules {
			u(m.name)
			u(m.base)
			u(m.split)
		}
	}
	return b
}

// indexReader decodes varints with bounds checks; the first error sticks.
type indexReader struct {
	b   []byte
	err error
}

func (r *indexReader) uv(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: index: %s truncated", ErrCorrupt, what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of records that take at least min bytes each, so a
// corrupt count cannot make a huge allocation.
func (r *indexReader) count(what string, min int) int {
	v := r.uv(what + " count")
	if r.err == nil && v > uint64(len(r.b)/min) {
		r.err = fmt.Errorf("%w: index: %d %s do not fit in %d bytes", ErrCorrupt, v, what, len(r.b))
		return 0
	}
	return int(v)
}

// below reads an index that must be less than n.
func (r *indexReader) below(what string, n int) uint64 {
	v := r.uv(what)
	if r.err == nil && v >= uint64(n) {
		r.err = fmt.Errorf("%w: index: %s %d out of range (%d)", ErrCorrupt, what, v, n)
	}
	return v
}

// unmarshalIndex decodes and validates an index against a data area of
// dataLen bytes.
func unmarshalIndex(b []byte, dataLen int) (*wireIndex, error) {
	r := &indexReader{b: b}
	ix := &wireIndex{}
	ix.strings = make([]string, r.count("strings", 1))
	for i := range ix.strings {
		n := r.uv("string length")
		if r.err == nil && n > uint64(len(r.b)) {
			r.err = fmt.Errorf("%w: index: string %d truncated", ErrCorrupt, i)
		}
		if r.err != nil {
			return nil, r.err
		}
		ix.strings[i] = string(r.b[:n])
		r.b = r.b[n:]
	}
	inData := func(what string, i int, off, n uint64) {
		if r.err == nil && (off > uint64(dataLen) || n > uint64(dataLen)-off) {
			r.err = fmt.Errorf("%w: %s %d: bytes [%d, +%d) outside the %d-byte data area", ErrCorrupt, what, i, off, n, dataLen)
		}
	}
	ix.dicts = make([]wireDict, r.count("dictionaries", 4))
	for i := range ix.dicts {
		d := wireDict{off: r.uv("dictionary offset"), n: r.uv("dictionary size"), rawLen: r.uv("dictionary length"),
			base: r.below("dictionary base", i+1)}
		inData("dictionary", i, d.off, d.n)
		if r.err == nil && d.rawLen > maxBlobLen {
			r.err = fmt.Errorf("%w: dictionary %d: length %d too large", ErrCorrupt, i, d.rawLen)
		}
		if r.err == nil && d.base != 0 && ix.dicts[d.base-1].base != 0 {
			r.err = fmt.Errorf("%w: dictionary %d: base %d has a base itself", ErrCorrupt, i, d.base-1)
		}
		ix.dicts[i] = d
	}
	ix.blobs = make([]wireBlob, r.count("blobs", 6))
	for i := range ix.blobs {
		bl := wireBlob{
			codec:     r.uv("blob codec"),
			dict:      r.below("blob dictionary", len(ix.dicts)+1),
			off:       r.uv("blob offset"),
			n:         r.uv("blob size"),
			packedLen: r.uv("blob packed length"),
			rawLen:    r.uv("blob length"),
		}
		if r.err != nil {
			return nil, r.err
		}
		if bl.rawLen > maxBlobLen || bl.packedLen > maxBlobLen {
			return nil, fmt.Errorf("%w: blob %d: length %d too large", ErrCorrupt, i, max(bl.rawLen, bl.packedLen))
		}
		want := bl.rawLen
		if bl.packedLen != 0 {
			want = bl.packedLen
		}
		switch bl.codec {
		case codecStored:
			inData("blob", i, bl.off, bl.n)
			if bl.n != want {
				return nil, fmt.Errorf("%w: blob %d: stored %d bytes, expected %d", ErrCorrupt, i, bl.n, want)
			}
		case codecZstd:
			inData("blob", i, bl.off, bl.n)
		case codecSlice:
			if bl.dict == 0 {
				return nil, fmt.Errorf("%w: blob %d: dictionary slice without a dictionary", ErrCorrupt, i)
			}
			d := ix.dicts[bl.dict-1]
			if bl.off > d.rawLen || bl.n > d.rawLen-bl.off || bl.n != want {
				return nil, fmt.Errorf("%w: blob %d: slice [%d, +%d) of a %d-byte dictionary", ErrCorrupt, i, bl.off, bl.n, d.rawLen)
			}
		default:
			return nil, fmt.Errorf("%w: blob %d: unknown codec %d", ErrCorrupt, i, bl.codec)
		}
		if r.err != nil {
			return nil, r.err
		}
		ix.blobs[i] = bl
	}
	ix.entries = make([]wireEntry, r.count("entries", 6))
	for i := range ix.entries {
		var e wireEntry
		for j := range e.key {
			e.key[j] = r.below("key string", len(ix.strings))
		}
		e.vmlinux = r.below("vmlinux blob", len(ix.blobs))
		e.modules = make([]wireModule, r.count("modules", 3))
		for j := range e.modules {
			e.modules[j] = wireModule{
				name:  r.below("module name", len(ix.strings)),
				base:  r.below("module base blob", len(ix.blobs)+1),
				split: r.below("module split blob", len(ix.blobs)),
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		ix.entries[i] = e
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: index: %d trailing bytes", ErrCorrupt, len(r.b))
	}
	return ix, nil
}

// validModuleName reports whether name can name a file in /sys/kernel/btf.
func validModuleName(name string) bool {
	return name != "" && name != "." && name != ".." && name != "vmlinux" && !strings.ContainsAny(name, "/\x00")
}

package payload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
)

// Magic starts every payload, so tools can tell one from BTF.
const Magic = "BTFEMBED"

const (
	// Version is the format version this package reads and writes.
	Version = 1
	// HeaderLen is the length of the fixed header before the index frame.
	HeaderLen = 24

	CodecStored = 0
	CodecZstd   = 1
	CodecSlice  = 2

	// MaxBlobLen bounds any single decoded blob or dictionary (a full
	// vmlinux BTF is 5-6 MB) so a corrupt length cannot ask for an
	// absurd allocation.
	MaxBlobLen = 256 << 20
)

// ErrCorrupt is wrapped by every error about a malformed payload.
var ErrCorrupt = errors.New("corrupt btfembed payload")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the header's checksum of b, the payload from offset 16 on.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// BlobRecord is a blob's index record.
type BlobRecord struct {
	Codec     uint64
	Dict      uint64 // dictionary index + 1, 0 for none
	Off, N    uint64 // stored bytes (data area, or dictionary content for CodecSlice)
	PackedLen uint64 // 0: not packed
	RawLen    uint64
}

// DictRecord is a dictionary's index record.
type DictRecord struct {
	Off, N, RawLen uint64
	Base           uint64 // dictionary index + 1, 0 for none
}

// ModuleRecord is a module's part of an entry's index record.
type ModuleRecord struct {
	Name, Base, Split uint64 // Name is a string index; Base is blob+1, 0 for none
}

// EntryRecord is an entry's index record.
type EntryRecord struct {
	Key     [4]uint64 // string indexes: arch, release, distro, version
	VMLinux uint64
	Modules []ModuleRecord
}

// Index is the decompressed index.
type Index struct {
	Strings []string
	Dicts   []DictRecord
	Blobs   []BlobRecord
	Entries []EntryRecord
}

// Marshal encodes the index, to be compressed into the index frame.
func (ix *Index) Marshal() []byte {
	var b []byte
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	u(uint64(len(ix.Strings)))
	for _, s := range ix.Strings {
		u(uint64(len(s)))
		b = append(b, s...)
	}
	u(uint64(len(ix.Dicts)))
	for _, d := range ix.Dicts {
		u(d.Off)
		u(d.N)
		u(d.RawLen)
		u(d.Base)
	}
	u(uint64(len(ix.Blobs)))
	for _, bl := range ix.Blobs {
		for _, v := range []uint64{bl.Codec, bl.Dict, bl.Off, bl.N, bl.PackedLen, bl.RawLen} {
			u(v)
		}
	}
	u(uint64(len(ix.Entries)))
	for _, e := range ix.Entries {
		for _, v := range e.Key {
			u(v)
		}
		u(e.VMLinux)
		u(uint64(len(e.Modules)))
		for _, m := range e.Modules {
			u(m.Name)
			u(m.Base)
			u(m.Split)
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

// UnmarshalIndex decodes and validates an index against a data area of
// dataLen bytes.
func UnmarshalIndex(b []byte, dataLen int) (*Index, error) {
	r := &indexReader{b: b}
	ix := &Index{}
	ix.Strings = make([]string, r.count("strings", 1))
	for i := range ix.Strings {
		n := r.uv("string length")
		if r.err == nil && n > uint64(len(r.b)) {
			r.err = fmt.Errorf("%w: index: string %d truncated", ErrCorrupt, i)
		}
		if r.err != nil {
			return nil, r.err
		}
		ix.Strings[i] = string(r.b[:n])
		r.b = r.b[n:]
	}
	inData := func(what string, i int, off, n uint64) {
		if r.err == nil && (off > uint64(dataLen) || n > uint64(dataLen)-off) {
			r.err = fmt.Errorf("%w: %s %d: bytes [%d, +%d) outside the %d-byte data area", ErrCorrupt, what, i, off, n, dataLen)
		}
	}
	ix.Dicts = make([]DictRecord, r.count("dictionaries", 4))
	for i := range ix.Dicts {
		d := DictRecord{Off: r.uv("dictionary offset"), N: r.uv("dictionary size"), RawLen: r.uv("dictionary length"),
			Base: r.below("dictionary base", i+1)}
		inData("dictionary", i, d.Off, d.N)
		if r.err == nil && d.RawLen > MaxBlobLen {
			r.err = fmt.Errorf("%w: dictionary %d: length %d too large", ErrCorrupt, i, d.RawLen)
		}
		if r.err == nil && d.Base != 0 && ix.Dicts[d.Base-1].Base != 0 {
			r.err = fmt.Errorf("%w: dictionary %d: base %d has a base itself", ErrCorrupt, i, d.Base-1)
		}
		ix.Dicts[i] = d
	}
	ix.Blobs = make([]BlobRecord, r.count("blobs", 6))
	for i := range ix.Blobs {
		bl := BlobRecord{
			Codec:     r.uv("blob codec"),
			Dict:      r.below("blob dictionary", len(ix.Dicts)+1),
			Off:       r.uv("blob offset"),
			N:         r.uv("blob size"),
			PackedLen: r.uv("blob packed length"),
			RawLen:    r.uv("blob length"),
		}
		if r.err != nil {
			return nil, r.err
		}
		if bl.RawLen > MaxBlobLen || bl.PackedLen > MaxBlobLen {
			return nil, fmt.Errorf("%w: blob %d: length %d too large", ErrCorrupt, i, max(bl.RawLen, bl.PackedLen))
		}
		want := bl.RawLen
		if bl.PackedLen != 0 {
			want = bl.PackedLen
		}
		switch bl.Codec {
		case CodecStored:
			inData("blob", i, bl.Off, bl.N)
			if bl.N != want {
				return nil, fmt.Errorf("%w: blob %d: stored %d bytes, expected %d", ErrCorrupt, i, bl.N, want)
			}
		case CodecZstd:
			inData("blob", i, bl.Off, bl.N)
		case CodecSlice:
			if bl.Dict == 0 {
				return nil, fmt.Errorf("%w: blob %d: dictionary slice without a dictionary", ErrCorrupt, i)
			}
			d := ix.Dicts[bl.Dict-1]
			if bl.Off > d.RawLen || bl.N > d.RawLen-bl.Off || bl.N != want {
				return nil, fmt.Errorf("%w: blob %d: slice [%d, +%d) of a %d-byte dictionary", ErrCorrupt, i, bl.Off, bl.N, d.RawLen)
			}
		default:
			return nil, fmt.Errorf("%w: blob %d: unknown codec %d", ErrCorrupt, i, bl.Codec)
		}
		if r.err != nil {
			return nil, r.err
		}
		ix.Blobs[i] = bl
	}
	ix.Entries = make([]EntryRecord, r.count("entries", 6))
	for i := range ix.Entries {
		var e EntryRecord
		for j := range e.Key {
			e.Key[j] = r.below("key string", len(ix.Strings))
		}
		e.VMLinux = r.below("vmlinux blob", len(ix.Blobs))
		e.Modules = make([]ModuleRecord, r.count("modules", 3))
		for j := range e.Modules {
			e.Modules[j] = ModuleRecord{
				Name:  r.below("module name", len(ix.Strings)),
				Base:  r.below("module base blob", len(ix.Blobs)+1),
				Split: r.below("module split blob", len(ix.Blobs)),
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		ix.Entries[i] = e
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: index: %d trailing bytes", ErrCorrupt, len(r.b))
	}
	return ix, nil
}

// ValidModuleName reports whether name can name a file in /sys/kernel/btf.
func ValidModuleName(name string) bool {
	return name != "" && name != "." && name != ".." && name != "vmlinux" && !strings.ContainsAny(name, "/\x00")
}

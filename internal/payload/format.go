package payload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// Magic starts every payload, so tools can tell one from BTF.
const Magic = "BTFEMBED"

const (
	// Version is the format version this package writes. It reads
	// MinVersion too: version 4 is this layout without the objects and
	// families sections (see the package doc on older versions).
	Version = 5
	// MinVersion is the oldest format version this package reads.
	MinVersion = 4
	// HeaderLen is the length of the fixed header before the directory.
	HeaderLen = 24

	// BlockLen is how many entries, at most, the encoder puts in one
	// block: Select decompresses and scans one block (two when a
	// release's builds straddle a boundary), so this bounds its work
	// whatever the number of kernels; larger blocks compress better.
	BlockLen = 128

	CodecStored  = 0
	CodecDeflate = 1
	CodecSlice   = 2

	// MaxBlobLen bounds any single decoded blob, dictionary or block (a
	// full vmlinux BTF is 5-6 MB) so a corrupt length cannot ask for an
	// absurd allocation.
	MaxBlobLen = 256 << 20
)

// ErrCorrupt is wrapped by every error about a malformed payload.
var ErrCorrupt = errors.New("corrupt btfembed payload")

// Checksum is the header's checksum of b, the payload from offset 16 on.
// The table is made at the first call, not at init, which every agent and
// every btfembed command would pay: crc32 makes the Castagnoli table once
// and hands the same one to later calls.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// BlobRecord is a blob's record.
type BlobRecord struct {
	Codec     uint64
	Dict      uint64 // dictionary index + 1, 0 for none
	Off, N    uint64 // stored bytes (data area, or dictionary content for CodecSlice)
	PackedLen uint64 // 0: not packed
	RawLen    uint64
}

// formLen is the length of the blob's stored form once decompressed:
// PackedLen if it is packed, else RawLen.
func (b BlobRecord) formLen() uint64 {
	if b.PackedLen != 0 {
		return b.PackedLen
	}
	return b.RawLen
}

// DictRecord is a dictionary's record.
type DictRecord struct {
	// ID is its payload-wide index + 1: blocks repeat the records of
	// the dictionaries they use, and the ID tells a reader that two are
	// one, to decompress it once.
	ID             uint64
	Off, N, RawLen uint64
	Base           uint64 // dictionary index + 1, 0 for none
}

// ModuleRecord is a module's part of an entry's record.
type ModuleRecord struct {
	Name        string
	Base, Split uint64 // Base is blob+1, 0 for none
}

// EntryRecord is an entry's record.
type EntryRecord struct {
	Key     kernelkey.Key
	VMLinux uint64 // blob index
	Modules []ModuleRecord
	// Verdicts is the entry's verdict set + 1 (Verdicts.Sets), 0 when
	// every program is predicted to load.
	Verdicts uint64
}

// Index is the whole payload's records, as the encoder builds them:
// dictionaries and blobs numbered payload-wide, entries sorted by key and
// modules by name. Marshal splits it into the directory and blocks.
type Index struct {
	Dicts    []DictRecord // ID unset: index + 1
	Blobs    []BlobRecord
	Entries  []EntryRecord
	Verdicts VerdictTable
	// Objects are the objects the payload was generated for, sorted by
	// name (objects.go); Families the kernel families stable for them,
	// sorted (families.go).
	Objects  []ObjectRecordDigests
	Families []FamilyRecord
}

// Marshal encodes the index, for a data area of dataLen bytes, as the
// directory, the uncompressed blocks of at most BlockLen entries each and
// the sections that follow them: verdicts, objects and families, each nil
// when it is empty. The caller compresses each block and each section
// that is not nil into a frame and appends the frame lengths with
// AppendFrames, in that order, an empty section as a nil frame.
func (ix *Index) Marshal(dataLen int) (dir []byte, blocks [][]byte, sections [][]byte) {
	u := func(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
	s := func(b []byte, v string) []byte { return append(u(b, uint64(len(v))), v...) }
	key := func(b []byte, k kernelkey.Key) []byte {
		for _, v := range []string{k.Arch, k.Release, k.Distro, k.Version} {
			b = s(b, v)
		}
		return b
	}
	// Module names per arch, so a reader lists them without a block.
	mods := map[string][]string{}
	for _, e := range ix.Entries {
		for _, m := range e.Modules {
			mods[e.Key.Arch] = append(mods[e.Key.Arch], m.Name)
		}
	}
	arches := slices.Sorted(maps.Keys(mods))
	dir = u(dir, uint64(dataLen))
	dir = u(dir, uint64(len(ix.Entries)))
	dir = u(dir, uint64(len(arches)))
	for _, a := range arches {
		names := slices.Compact(slices.Sorted(slices.Values(mods[a])))
		dir = s(dir, a)
		dir = u(dir, uint64(len(names)))
		for _, n := range names {
			dir = s(dir, n)
		}
	}
	nblocks := (len(ix.Entries) + BlockLen - 1) / BlockLen
	dir = u(dir, uint64(nblocks))
	for lo := 0; lo < len(ix.Entries); lo += BlockLen {
		entries := ix.Entries[lo:min(lo+BlockLen, len(ix.Entries))]
		dir = key(dir, entries[0].Key)
		// The block's own numbering of the dictionaries and blobs its
		// entries use, bases before the dictionaries stored on them.
		var dicts, blobs []uint64
		dictNo, blobNo := map[uint64]uint64{}, map[uint64]uint64{}
		useDict := func(d uint64) {
			if _, ok := dictNo[d]; !ok {
				dictNo[d] = uint64(len(dicts)) + 1
				dicts = append(dicts, d)
			}
		}
		useBlob := func(i uint64) {
			if _, ok := blobNo[i]; ok {
				return
			}
			blobNo[i] = uint64(len(blobs))
			blobs = append(blobs, i)
			if d := ix.Blobs[i].Dict; d != 0 {
				if base := ix.Dicts[d-1].Base; base != 0 {
					useDict(base)
				}
				useDict(d)
			}
		}
		for _, e := range entries {
			useBlob(e.VMLinux)
			for _, m := range e.Modules {
				if m.Base != 0 {
					useBlob(m.Base - 1)
				}
				useBlob(m.Split)
			}
		}
		var b []byte
		b = u(b, uint64(len(dicts)))
		for _, d := range dicts {
			r := ix.Dicts[d-1]
			b = u(u(u(u(b, d), r.Off), r.N), r.RawLen)
			if r.Base != 0 {
				b = u(b, dictNo[r.Base])
			} else {
				b = u(b, 0)
			}
		}
		b = u(b, uint64(len(blobs)))
		for _, i := range blobs {
			r := ix.Blobs[i]
			if r.Dict != 0 {
				r.Dict = dictNo[r.Dict]
			}
			for _, v := range []uint64{r.Codec, r.Dict, r.Off, r.N, r.PackedLen, r.RawLen} {
				b = u(b, v)
			}
		}
		b = u(b, uint64(len(entries)))
		for _, e := range entries {
			b = key(b, e.Key)
			b = u(b, blobNo[e.VMLinux])
			b = u(b, uint64(len(e.Modules)))
			for _, m := range e.Modules {
				b = s(b, m.Name)
				if m.Base != 0 {
					b = u(b, blobNo[m.Base-1]+1)
				} else {
					b = u(b, 0)
				}
				b = u(b, blobNo[m.Split])
			}
			b = u(b, e.Verdicts)
		}
		blocks = append(blocks, b)
	}
	dir = u(dir, uint64(len(ix.Verdicts.Sets)))
	return dir, blocks, [][]byte{ix.Verdicts.marshal(), marshalObjects(ix.Objects), marshalFamilies(ix.Families)}
}

// AppendFrames appends to a directory from Marshal each frame's length
// and the length of the bytes it decompresses to: the blocks', then the
// sections' (0 and 0 for an empty section: no frame).
func AppendFrames(dir []byte, frames, raws [][]byte) []byte {
	for i := range frames {
		dir = binary.AppendUvarint(dir, uint64(len(frames[i])))
		dir = binary.AppendUvarint(dir, uint64(len(raws[i])))
	}
	return dir
}

// reader decodes varints and strings with bounds checks; the first error
// sticks. what names the part being read, for errors. It reads a copy of
// its input made once, as a string, so that the strings it returns are
// slices of it and cost no allocation each. Records are allocated after
// alloc charged bud for them; held is what it charged.
type reader struct {
	b    string
	what string
	err  error
	bud  *Budget
	held uint64
}

// newReader reads b, charging bud (if not nil) for records; the caller
// has charged the copy of b.
func newReader(b []byte, what string, bud *Budget) *reader {
	return &reader{b: string(b), what: what, bud: bud}
}

// alloc charges the budget for n records of size bytes each, which the
// caller allocates next, and returns n; 0 once the reader has failed.
// n comes from count, so it is bounded by the input, but a record in
// memory is 8 to 70 times its bytes on the wire: the budget, not the
// input, bounds what decoding holds.
func (r *reader) alloc(n int, size uintptr, what string) int {
	if r.err != nil {
		return 0
	}
	c := uint64(n) * uint64(size)
	if err := r.bud.Charge(c, r.what+": "+what); err != nil {
		r.err = err
		return 0
	}
	r.held += c
	return n
}

// failed gives back what the reader charged if it failed, and returns its
// error.
func (r *reader) failed() error {
	if r.err != nil {
		r.bud.Release(r.held)
		r.held = 0
	}
	return r.err
}

// Sizes in memory of what the decoder allocates per record.
const (
	sizeString    = uint64(unsafe.Sizeof(""))
	sizeSlice     = uint64(unsafe.Sizeof([]byte(nil)))
	sizeLazyBlock = uint64(unsafe.Sizeof(lazy[[]Entry]{}))
	// sizeMapEntry bounds what one entry of a small map costs: a Go
	// map's slots hold at most 7/8 of their groups, doubling as they
	// grow, plus the table's header.
	sizeMapEntry = 128
)

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s: %s", ErrCorrupt, r.what, fmt.Sprintf(format, args...))
	}
}

func (r *reader) uv(what string) uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	n := 0
	for shift := 0; ; shift += 7 {
		if n == len(r.b) || n == binary.MaxVarintLen64 {
			n = 0
			break
		}
		c := r.b[n]
		n++
		if n == binary.MaxVarintLen64 && c > 1 {
			n = 0 // overflows 64 bits
			break
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			if c == 0 && n > 1 {
				// An overlong encoding: the encoder writes none, and
				// one number must have one spelling.
				r.fail("%s not in its shortest encoding", what)
				return 0
			}
			break
		}
	}
	if n <= 0 {
		r.fail("%s truncated", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// str reads a length-prefixed string.
func (r *reader) str(what string) string {
	n := r.uv(what)
	if r.err == nil && n > uint64(len(r.b)) {
		r.fail("%s truncated", what)
	}
	if r.err != nil {
		return ""
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) key() kernelkey.Key {
	return kernelkey.Key{Arch: r.str("arch"), Release: r.str("release"), Distro: r.str("distro"), Version: r.str("version")}
}

// count reads a count of records that take at least min bytes each, so a
// corrupt count cannot make a huge allocation.
func (r *reader) count(what string, min int) int {
	v := r.uv(what + " count")
	if r.err == nil && v > uint64(len(r.b)/min) {
		r.fail("%d %s do not fit in %d bytes", v, what, len(r.b))
		return 0
	}
	return int(v)
}

// below reads an index that must be less than n.
func (r *reader) below(what string, n int) uint64 {
	v := r.uv(what)
	if r.err == nil && v >= uint64(n) {
		r.fail("%s %d out of range (%d)", what, v, n)
	}
	if r.err != nil {
		return 0
	}
	return v
}

// blockRef is a directory row: a block's first key and where its frame is.
type blockRef struct {
	first       kernelkey.Key
	off, n, raw uint64 // frame in the blocks area, decompressed length
}

// directory is the decoded directory.
type directory struct {
	held    uint64 // charged for the directory's bytes and records
	entries uint64
	modules map[string][]string // per arch, sorted
	blocks  []blockRef
	// sets is the number of verdict sets, verdicts the frame of the
	// verdicts section (n 0: none).
	sets     uint64
	verdicts blockRef
	// objects and families are the frames of those sections (n 0: none,
	// as in every payload of version 4).
	objects, families blockRef
}

// readDirectory decodes and validates a directory of a payload of format
// version against a blocks area of blocksLen bytes followed by a data area of
// dataLen bytes: the directory states the data area's length, so a
// truncated payload is caught here and not when some kernel is selected.
func readDirectory(b []byte, version uint32, blocksLen, dataLen int, bud *Budget) (*directory, error) {
	if err := bud.Charge(uint64(len(b)), "directory"); err != nil {
		return nil, err
	}
	r := newReader(b, "directory", bud)
	r.held = uint64(len(b))
	if n := r.uv("data length"); r.err == nil && n != uint64(dataLen) {
		r.fail("data area of %d bytes, expected %d", dataLen, n)
	}
	d := &directory{entries: r.uv("entry count"), modules: map[string][]string{}}
	arches := r.count("arches", 2)
	for i := 0; i < arches && r.err == nil; i++ {
		arch := r.str("arch")
		r.alloc(1, sizeMapEntry, "arch")
		names := make([]string, r.alloc(r.count("module names", 1), uintptr(sizeString), "module names"))
		for j := range names {
			names[j] = r.str("module name")
			if r.err == nil && (!ValidModuleName(names[j]) || j > 0 && names[j-1] >= names[j]) {
				r.fail("arch %s: bad or unsorted module name %q", arch, names[j])
			}
		}
		if _, dup := d.modules[arch]; r.err == nil && dup {
			r.fail("arch %s listed twice", arch)
		}
		d.modules[arch] = names
	}
	d.blocks = make([]blockRef, r.alloc(r.count("blocks", 6), unsafe.Sizeof(blockRef{}), "blocks"))
	for i := range d.blocks {
		d.blocks[i].first = r.key()
		if r.err == nil && i > 0 && d.blocks[i-1].first.Compare(d.blocks[i].first) >= 0 {
			r.fail("blocks not sorted at %s", d.blocks[i].first)
		}
	}
	d.sets = r.uv("verdict set count")
	var off uint64
	frame := func(what string, i int) blockRef {
		bl := blockRef{off: off, n: r.uv("frame length"), raw: r.uv(what + " length")}
		if r.err == nil && (bl.n > uint64(blocksLen)-off || bl.raw > MaxBlobLen) {
			r.fail("%s %d: frame of %d bytes (%d decompressed) does not fit", what, i, bl.n, bl.raw)
		}
		off += bl.n
		return bl
	}
	for i := range d.blocks {
		first := d.blocks[i].first
		d.blocks[i] = frame("block", i)
		d.blocks[i].first = first
	}
	d.verdicts = frame("verdicts", 0)
	if r.err == nil && (d.verdicts.n == 0) != (d.verdicts.raw == 0) || r.err == nil && (d.verdicts.raw == 0) != (d.sets == 0) {
		r.fail("verdicts frame of %d bytes (%d decompressed) for %d sets", d.verdicts.n, d.verdicts.raw, d.sets)
	}
	if version >= 5 {
		d.objects, d.families = frame("objects", 0), frame("families", 0)
		for _, f := range []blockRef{d.objects, d.families} {
			if r.err == nil && (f.n == 0) != (f.raw == 0) {
				r.fail("section frame of %d bytes for %d decompressed", f.n, f.raw)
			}
		}
	}
	if r.err == nil && off != uint64(blocksLen) {
		r.fail("blocks take %d of %d bytes", off, blocksLen)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	if r.err == nil && (d.entries < uint64(len(d.blocks)) || d.entries > uint64(len(d.blocks))*math.MaxInt32) {
		r.fail("%d entries in %d blocks", d.entries, len(d.blocks))
	}
	if err := r.failed(); err != nil {
		return nil, err
	}
	d.held = r.held
	return d, nil
}

// Entry is one kernel's record, its blobs resolved.
type Entry struct {
	Key     kernelkey.Key
	VMLinux Blob
	// Modules are sorted by name.
	Modules []EntryModule
	// Verdicts is the entry's verdict set + 1, 0 for none: see
	// Payload.Verdicts.
	Verdicts uint64
}

// EntryModule is one module of an Entry.
type EntryModule struct {
	Name string
	// Base is the module's distilled base BTF, if HasBase; Split is its
	// split BTF.
	Base, Split Blob
	HasBase     bool
}

// Blob is a blob's record with those of the dictionaries it needs.
type Blob struct {
	BlobRecord
	// Dict is its dictionary and DictBase that dictionary's base (ID 0:
	// none).
	Dict, DictBase DictRecord
}

// listed says whether names, sorted, holds name.
func listed(names []string, name string) bool {
	i := sort.SearchStrings(names, name)
	return i < len(names) && names[i] == name
}

// readBlock decodes and validates block i, raw, whose entries must sort
// at or after first and before next (if not nil), against a data area of
// dataLen bytes and the directory's verdict sets and module lists. It charges bud for the
// records, which the entries hold; the caller has charged the copy of
// raw. On error it has given back what it charged.
func readBlock(i int, raw []byte, first kernelkey.Key, next *kernelkey.Key, dataLen int, dir *directory, bud *Budget) ([]Entry, error) {
	r := newReader(raw, fmt.Sprintf("block %d", i), bud)
	entries, err := r.block(first, next, dataLen, dir)
	if err == nil {
		err = r.err
	}
	if err != nil {
		r.err = err
		return nil, r.failed()
	}
	return entries, nil
}

func (r *reader) block(first kernelkey.Key, next *kernelkey.Key, dataLen int, dir *directory) ([]Entry, error) {
	inData := func(what string, j int, off, n uint64) {
		if r.err == nil && (off > uint64(dataLen) || n > uint64(dataLen)-off) {
			r.fail("%s %d: bytes [%d, +%d) outside the %d-byte data area", what, j, off, n, dataLen)
		}
	}
	// A dictionary record, and its slot in Payload.dicts once used.
	dictSize := unsafe.Sizeof(DictRecord{}) + unsafe.Sizeof(lazy[[]byte]{}) + sizeMapEntry
	dicts := make([]DictRecord, r.alloc(r.count("dictionaries", 5), dictSize, "dictionaries"))
	for j := range dicts {
		d := DictRecord{ID: r.uv("dictionary ID"), Off: r.uv("dictionary offset"), N: r.uv("dictionary size"),
			RawLen: r.uv("dictionary length"), Base: r.below("dictionary base", j+1)}
		inData("dictionary", j, d.Off, d.N)
		if r.err == nil && (d.ID == 0 || d.ID > math.MaxUint32 || d.RawLen > MaxBlobLen) {
			r.fail("dictionary %d: ID %d or length %d out of range", j, d.ID, d.RawLen)
		}
		if r.err == nil && d.Base != 0 && dicts[d.Base-1].Base != 0 {
			r.fail("dictionary %d: base %d has a base itself", j, d.Base-1)
		}
		dicts[j] = d
	}
	blobs := make([]Blob, r.alloc(r.count("blobs", 6), unsafe.Sizeof(Blob{}), "blobs"))
	for j := range blobs {
		bl := BlobRecord{
			Codec:     r.uv("blob codec"),
			Dict:      r.below("blob dictionary", len(dicts)+1),
			Off:       r.uv("blob offset"),
			N:         r.uv("blob size"),
			PackedLen: r.uv("blob packed length"),
			RawLen:    r.uv("blob length"),
		}
		if r.err != nil {
			return nil, r.err
		}
		if bl.RawLen > MaxBlobLen || bl.PackedLen > MaxBlobLen {
			r.fail("blob %d: length %d too large", j, max(bl.RawLen, bl.PackedLen))
			return nil, r.err
		}
		want := bl.formLen()
		b := Blob{BlobRecord: bl}
		if bl.Dict != 0 {
			b.Dict = dicts[bl.Dict-1]
			if b.Dict.Base != 0 {
				b.DictBase = dicts[b.Dict.Base-1]
			}
		}
		switch bl.Codec {
		case CodecStored:
			inData("blob", j, bl.Off, bl.N)
			if bl.N != want {
				r.fail("blob %d: stored %d bytes, expected %d", j, bl.N, want)
			}
		case CodecDeflate:
			inData("blob", j, bl.Off, bl.N)
		case CodecSlice:
			if bl.Dict == 0 {
				r.fail("blob %d: dictionary slice without a dictionary", j)
			} else if d := b.Dict; bl.Off > d.RawLen || bl.N > d.RawLen-bl.Off || bl.N != want {
				r.fail("blob %d: slice [%d, +%d) of a %d-byte dictionary", j, bl.Off, bl.N, d.RawLen)
			}
		default:
			r.fail("blob %d: unknown codec %d", j, bl.Codec)
		}
		if r.err != nil {
			return nil, r.err
		}
		blobs[j] = b
	}
	blob := func(what string) Blob {
		i := r.below(what, len(blobs))
		if r.err != nil {
			return Blob{}
		}
		return blobs[i]
	}
	entries := make([]Entry, r.alloc(r.count("entries", 6), unsafe.Sizeof(Entry{}), "entries"))
	for j := range entries {
		e := &entries[j]
		e.Key = r.key()
		e.VMLinux = blob("vmlinux blob")
		e.Modules = make([]EntryModule, r.alloc(r.count("modules", 3), unsafe.Sizeof(EntryModule{}), "modules"))
		for k := range e.Modules {
			m := &e.Modules[k]
			m.Name = r.str("module name")
			base := r.below("module base blob", len(blobs)+1)
			m.Split = blob("module split blob")
			if r.err == nil && base != 0 {
				m.Base, m.HasBase = blobs[base-1], true
			}
			if r.err == nil && (!ValidModuleName(m.Name) || k > 0 && e.Modules[k-1].Name >= m.Name) {
				r.fail("entry %s: bad or unsorted module name %q", e.Key, m.Name)
			}
			// A reader lists an arch's modules from the directory alone.
			if r.err == nil && !listed(dir.modules[e.Key.Arch], m.Name) {
				r.fail("entry %s: module %s is not in the directory's list for %s", e.Key, m.Name, e.Key.Arch)
			}
		}
		e.Verdicts = r.below("verdict set", int(min(dir.sets+1, math.MaxInt32)))
		if r.err != nil {
			return nil, r.err
		}
		if j == 0 && e.Key != first || j > 0 && entries[j-1].Key.Compare(e.Key) >= 0 || next != nil && e.Key.Compare(*next) >= 0 {
			r.fail("entry %s out of order", e.Key)
			return nil, r.err
		}
	}
	if r.err == nil && len(entries) == 0 {
		r.fail("no entries")
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return entries, r.err
}

// ValidModuleName reports whether name can name a file in /sys/kernel/btf.
func ValidModuleName(name string) bool {
	return name != "" && name != "." && name != ".." && name != "vmlinux" && !strings.ContainsAny(name, "/\x00")
}

package encode

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload"
)

// Options tunes Write. A nil *Options means the defaults.
type Options struct {
	// MaxDictSize bounds each shared dictionary, in bytes of packed BTF,
	// except that a dictionary always takes two blobs. Selecting
	// a kernel decompresses its dictionary, so this bounds the work of
	// one Select beyond the entry itself; larger dictionaries compress
	// better. 0 means DefaultMaxDictSize; a negative value disables
	// dictionaries, so each blob is compressed on its own.
	MaxDictSize int

	// noPack skips the BTF column transform, for size comparisons.
	noPack bool
}

// DefaultMaxDictSize is the dictionary bound used when Options leaves
// it zero. With at least minDictBlobs per dictionary, Select allocates
// little more than parsing its entry costs anyway (about 70 KB in all for
// 10 KB of minimized BTF, against 4 MB to parse a kernel's own BTF), while
// kernels of a series are stored as small differences against their
// dictionary, and a dictionary as its difference to an earlier one.
const DefaultMaxDictSize = 16 << 10

// repThreshold decides when a blob starts a new dictionary instead of
// being stored against the current, full one: when that still takes more
// than 1/repThreshold of its packed size, it shares too little with it.
const repThreshold = 4

// minDictBlobs is how many blobs a dictionary takes whatever their size:
// the bound then scales with the BTF, so a dictionary costs Select about
// what parsing its entry does.
const minDictBlobs = 2

// Payload is what Write encodes.
type Payload struct {
	Entries []Entry
	// Objects are the objects the entries' BTF was minimized for, with
	// every program's relocation digest (package relodigest), so that the
	// runtime refuses a collection of other objects; in any order. None
	// records nothing, and the runtime then checks nothing.
	Objects []payload.ObjectRecordDigests
	// Families are the kernel families whose members all give Objects the
	// same fixups, each with the ABI numbers of its members, in any
	// order; every member must be one of Entries.
	Families []payload.FamilyRecord
}

// Write writes a payload holding p to w. The bytes depend only on the
// set of entries, objects and families, not on their order: entries are
// sorted by key and modules by name. Identical blobs are stored once. Blobs of one role (vmlinux, or
// one module's base or split BTF) share DEFLATE dictionaries made of some of
// them, so structure common to many kernels is stored once while each entry
// still decompresses on its own. The entries' load verdicts are stored
// once per distinct row and per distinct set of rows (verdicts.go). Write
// fails on an entry without arch, release or vmlinux BTF, a duplicate key,
// a bad module name or a bad verdict, on an object or program named
// twice or unprintably, and on a family that is not valid or one of
// whose members is not an entry.
func Write(w io.Writer, p *Payload, opts *Options) error {
	if opts == nil {
		opts = &Options{}
	}
	entries := p.Entries
	maxDict := opts.MaxDictSize
	if maxDict == 0 {
		maxDict = DefaultMaxDictSize
	}

	sorted := slices.Clone(entries)
	for i := range sorted {
		e := &sorted[i]
		e.Key.Arch, _ = kernelkey.NormalizeArch(e.Key.Arch)
		e.Modules = slices.Clone(e.Modules)
		slices.SortFunc(e.Modules, func(a, b Module) int { return cmp.Compare(a.Name, b.Name) })
	}
	slices.SortFunc(sorted, func(a, b Entry) int { return a.Key.Compare(b.Key) })

	b := newBuilder(!opts.noPack)
	ix := &payload.Index{}
	for i, e := range sorted {
		if e.Key.Arch == "" || e.Key.Release == "" {
			return fmt.Errorf("entry %d: key %q lacks arch or release", i, e.Key)
		}
		if i > 0 && e.Key == sorted[i-1].Key {
			return fmt.Errorf("duplicate entry for %s", e.Key)
		}
		if len(e.VMLinux) == 0 {
			return fmt.Errorf("entry %s: no vmlinux BTF", e.Key)
		}
		vmlinux, err := b.blob(e.VMLinux, "vmlinux")
		if err != nil {
			return fmt.Errorf("entry %s: vmlinux: %w", e.Key, err)
		}
		we := payload.EntryRecord{
			Key:     e.Key,
			VMLinux: vmlinux,
		}
		for j, m := range e.Modules {
			if !payload.ValidModuleName(m.Name) || len(m.Split) == 0 {
				return fmt.Errorf("entry %s: module %d (%q): bad name or no split BTF", e.Key, j, m.Name)
			}
			if j > 0 && m.Name == e.Modules[j-1].Name {
				return fmt.Errorf("entry %s: duplicate module %s", e.Key, m.Name)
			}
			split, err := b.blob(m.Split, "split\x00"+m.Name)
			if err != nil {
				return fmt.Errorf("entry %s: module %s: %w", e.Key, m.Name, err)
			}
			wm := payload.ModuleRecord{Name: m.Name, Split: split}
			if len(m.Base) != 0 {
				base, err := b.blob(m.Base, "base\x00"+m.Name)
				if err != nil {
					return fmt.Errorf("entry %s: module %s base: %w", e.Key, m.Name, err)
				}
				wm.Base = base + 1
			}
			we.Modules = append(we.Modules, wm)
		}
		ix.Entries = append(ix.Entries, we)
	}
	if err := verdicts(ix, sorted); err != nil {
		return err
	}
	var err error
	if ix.Objects, err = objects(p.Objects); err != nil {
		return err
	}
	if ix.Families, err = families(p.Families, sorted); err != nil {
		return err
	}
	enc, err := newEncoder()
	if err != nil {
		return err
	}
	defer enc.close()
	data, err := b.compress(ix, maxDict, enc)
	if err != nil {
		return err
	}
	dir, blocks, sections := ix.Marshal(len(data))
	for _, bl := range append(blocks, sections...) {
		if len(bl) > payload.MaxBlobLen {
			return fmt.Errorf("index block of %d bytes exceeds the %d-byte limit", len(bl), payload.MaxBlobLen)
		}
	}
	frames, err := enc.plain(blocks...)
	if err != nil {
		return err
	}
	// An empty section, no frame: an agent with nothing to skip pays two
	// bytes of directory for the verdicts and one per entry.
	for _, sec := range sections {
		frame := []byte{}
		if len(sec) > 0 {
			f, err := enc.plain(sec)
			if err != nil {
				return err
			}
			frame = f[0]
		}
		frames, blocks = append(frames, frame), append(blocks, sec)
	}
	var blocksLen int
	for _, f := range frames {
		blocksLen += len(f)
	}
	dir = payload.AppendFrames(dir, frames, blocks)
	if len(dir) > payload.MaxBlobLen || blocksLen > payload.MaxBlobLen || len(data) > math.MaxUint32 {
		return fmt.Errorf("payload of %d + %d + %d bytes exceeds the format's limits", len(dir), blocksLen, len(data))
	}

	out := make([]byte, 0, payload.HeaderLen+len(dir)+blocksLen+len(data))
	out = append(out, payload.Magic...)
	out = binary.LittleEndian.AppendUint32(out, payload.Version)
	out = binary.LittleEndian.AppendUint32(out, 0) // checksum, below
	out = binary.LittleEndian.AppendUint32(out, uint32(len(dir)))
	out = binary.LittleEndian.AppendUint32(out, uint32(blocksLen))
	out = append(out, dir...)
	for _, f := range frames {
		out = append(out, f...)
	}
	out = append(out, data...)
	binary.LittleEndian.PutUint32(out[12:], payload.Checksum(out[16:]))
	_, err = w.Write(out)
	return err
}

// builder interns blobs in first-use order.
type builder struct {
	blobs    []pendingBlob
	blobIdx  map[[sha256.Size]byte]uint64
	groups   []string
	groupIdx map[string][]uint64 // blobs per group, in first-use order
	pack     bool                // apply the BTF column transform
}

type pendingBlob struct {
	raw, packed []byte // packed is nil when the transform does not apply
	group       string
}

// form returns the bytes that get compressed: the packed form if any.
func (p *pendingBlob) form() []byte {
	if p.packed != nil {
		return p.packed
	}
	return p.raw
}

func newBuilder(pack bool) *builder {
	return &builder{
		pack:     pack,
		blobIdx:  map[[sha256.Size]byte]uint64{},
		groupIdx: map[string][]uint64{},
	}
}

func (b *builder) blob(raw []byte, group string) (uint64, error) {
	if len(raw) > payload.MaxBlobLen {
		return 0, fmt.Errorf("%d bytes of BTF exceed the %d-byte limit", len(raw), payload.MaxBlobLen)
	}
	sum := sha256.Sum256(raw)
	if i, ok := b.blobIdx[sum]; ok {
		return i, nil
	}
	i := uint64(len(b.blobs))
	b.blobIdx[sum] = i
	p := pendingBlob{raw: raw, group: group}
	if b.pack {
		// Keep the transform only if it applies and provably reverses.
		if packed, ok := payload.Pack(raw); ok {
			if back, err := payload.Unpack(packed, len(raw)); err == nil && bytes.Equal(back, raw) {
				p.packed = packed
			}
		}
	}
	b.blobs = append(b.blobs, p)
	if _, ok := b.groupIdx[group]; !ok {
		b.groups = append(b.groups, group)
	}
	b.groupIdx[group] = append(b.groupIdx[group], i)
	return i, nil
}

// compress fills ix.Dicts and ix.Blobs and returns the data area.
func (b *builder) compress(ix *payload.Index, maxDict int, enc *encoder) ([]byte, error) {
	c := &compressor{ix: ix, blobs: b.blobs, enc: enc}
	ix.Blobs = make([]payload.BlobRecord, len(b.blobs))
	for _, g := range b.groups {
		var err error
		if maxDict > 0 {
			err = c.group(b.groupIdx[g], maxDict)
		} else {
			err = c.alone(b.groupIdx[g])
		}
		if err != nil {
			return nil, fmt.Errorf("compress %q blobs: %w", g, err)
		}
	}
	return c.data, nil
}

// compressor lays out dictionaries and blobs in the data area.
type compressor struct {
	ix          *payload.Index
	blobs       []pendingBlob
	data        []byte
	dictContent [][]byte // by dictionary index
	enc         *encoder
}

// alone compresses each blob on its own.
func (c *compressor) alone(members []uint64) error {
	forms := make([][]byte, len(members))
	for j, i := range members {
		forms[j] = c.blobs[i].form()
	}
	frames, err := c.enc.plain(forms...)
	if err != nil {
		return err
	}
	for j, i := range members {
		c.place(i, 0, frames[j])
	}
	return nil
}

// delta is a blob to be stored as its difference to a dictionary: z is
// its frame against it.
type delta struct {
	blob uint64
	z    []byte
}

// group compresses a group's blobs, in first-use order (entries are
// sorted, so similar kernels are neighbours), against dictionaries of at
// most maxDict bytes. A blob joins the current dictionary as a
// representative while there is room: the dictionary is stored compressed
// as one stream, so a representative costs about what its difference to
// the earlier ones does, and it is then read from the dictionary for free.
// Once the dictionary is full, a blob is stored as its difference to it,
// unless that difference is more than 1/repThreshold of the blob: then the
// blob starts a new dictionary.
//
// The dictionary is encoded against once it is full; the frames made
// against it are kept (each at most a quarter of its blob) until it is
// flushed.
func (c *compressor) group(members []uint64, maxDict int) error {
	var dict []byte
	reps := map[uint64]uint64{} // representative -> offset in dict
	var deltas []delta          // blobs stored against dict
	full := false               // dict takes no more representatives
	var bases []uint64          // the group's dictionaries stored on their own
	flush := func() error {
		full = false
		if len(dict) == 0 {
			return nil
		}
		stored, base, err := c.storeDict(dict, bases)
		if err != nil {
			return err
		}
		c.ix.Dicts = append(c.ix.Dicts, payload.DictRecord{Off: uint64(len(c.data)), N: uint64(len(stored)), RawLen: uint64(len(dict)), Base: base})
		c.dictContent = append(c.dictContent, dict)
		c.data = append(c.data, stored...)
		dictNo := uint64(len(c.ix.Dicts))
		if base == 0 {
			bases = append(bases, dictNo)
		}
		for i, off := range reps {
			form := c.blobs[i].form()
			c.ix.Blobs[i] = c.record(i, payload.BlobRecord{Codec: payload.CodecSlice, Dict: dictNo, Off: off, N: uint64(len(form))})
		}
		for _, d := range deltas {
			c.place(d.blob, dictNo, d.z)
		}
		dict, reps, deltas = nil, map[uint64]uint64{}, nil
		return nil
	}
	for _, i := range members {
		form := c.blobs[i].form()
		if !full && (len(reps) < minDictBlobs || len(dict)+len(form) <= maxDict) {
			reps[i] = uint64(len(dict))
			dict = append(dict, form...)
			continue
		}
		full = len(dict) > 0
		if full {
			z, err := c.enc.with(dict, form)
			if err != nil {
				return err
			}
			if len(z)*repThreshold <= len(form) {
				deltas = append(deltas, delta{i, z})
				continue
			}
		}
		if err := flush(); err != nil {
			return err
		}
		reps[i] = 0
		dict = append(dict, form...)
	}
	return flush()
}

// maxBaseTries bounds how many earlier dictionaries storeDict tries as the
// base of a new one: the group's first and the most recent.
const maxBaseTries = 4

// storeDict compresses a new dictionary's content, on its own or against
// one of the earlier dictionaries stored on their own (bases, dictionary
// numbers), whichever is smallest, so a dictionary for a new kernel series
// stores only what is new in it. It returns the stored bytes and the base
// used (dictionary number, 0 for none). Bases are never chained further,
// so reading a blob takes at most two dictionaries.
func (c *compressor) storeDict(dict []byte, bases []uint64) ([]byte, uint64, error) {
	best, err := c.enc.with(nil, dict)
	if err != nil {
		return nil, 0, err
	}
	var bestBase uint64
	tries := bases
	if len(bases) > maxBaseTries {
		tries = append([]uint64{bases[0]}, bases[len(bases)-maxBaseTries+1:]...)
	}
	for _, no := range tries {
		z, err := c.enc.with(c.dictContent[no-1], dict)
		if err != nil {
			return nil, 0, err
		}
		if len(z) < len(best) {
			best, bestBase = z, no
		}
	}
	return best, bestBase, nil
}

// place appends blob i to the data area as z, its frame against
// dictionary dictNo (0: none), or as is where compression does not pay.
func (c *compressor) place(i, dictNo uint64, z []byte) {
	form := c.blobs[i].form()
	if len(z) < len(form) {
		c.ix.Blobs[i] = c.record(i, payload.BlobRecord{Codec: payload.CodecDeflate, Dict: dictNo, Off: uint64(len(c.data)), N: uint64(len(z))})
		c.data = append(c.data, z...)
		return
	}
	c.ix.Blobs[i] = c.record(i, payload.BlobRecord{Codec: payload.CodecStored, Off: uint64(len(c.data)), N: uint64(len(form))})
	c.data = append(c.data, form...)
}

// record completes w with blob i's lengths.
func (c *compressor) record(i uint64, w payload.BlobRecord) payload.BlobRecord {
	p := &c.blobs[i]
	w.RawLen = uint64(len(p.raw))
	if p.packed != nil {
		w.PackedLen = uint64(len(p.packed))
	}
	return w
}

// Entry is the BTF of one kernel, to be embedded.
type Entry struct {
	Key kernelkey.Key
	// VMLinux is raw (minimized) vmlinux BTF.
	VMLinux []byte
	// Modules may be empty.
	Modules []Module
	// Unloadable are the programs predicted not to load on the kernel, or
	// that may not; nil when all are predicted to load.
	Unloadable []Prediction
}

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

package runtime

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// EncodeOptions tunes Encode. A nil *EncodeOptions means the defaults.
type EncodeOptions struct {
	// MaxDictSize bounds each shared dictionary, in bytes of packed BTF.
	// Selecting a kernel decompresses its dictionary, so this bounds the
	// work of one Select beyond the entry itself. 0 means
	// DefaultMaxDictSize; a negative value disables dictionaries, so each
	// blob is compressed on its own.
	MaxDictSize int
}

// DefaultMaxDictSize is the dictionary bound used when EncodeOptions leaves
// it zero.
const DefaultMaxDictSize = 256 << 10

// repThreshold decides when a blob joins its dictionary as a new
// representative: when compressing it against the dictionary so far still
// takes more than 1/repThreshold of its packed size, it shares too little
// with what is there.
const repThreshold = 4

// Encode writes a payload holding entries to w. The bytes depend only on the
// set of entries, not on their order: entries are sorted by key and modules
// by name. Identical blobs are stored once. Blobs of one architecture and
// role (vmlinux, or one module's base or split BTF) are compressed against a
// shared dictionary made of some of them, so structure shared across
// kernels is stored once while each entry still decompresses on its own.
func Encode(w io.Writer, entries []Entry, opts *EncodeOptions) error {
	if opts == nil {
		opts = &EncodeOptions{}
	}
	maxDict := opts.MaxDictSize
	if maxDict == 0 {
		maxDict = DefaultMaxDictSize
	}

	sorted := slices.Clone(entries)
	for i := range sorted {
		e := &sorted[i]
		e.Key.Arch = NormalizeArch(e.Key.Arch)
		e.Modules = slices.Clone(e.Modules)
		slices.SortFunc(e.Modules, func(a, b Module) int { return cmp.Compare(a.Name, b.Name) })
	}
	slices.SortFunc(sorted, func(a, b Entry) int { return a.Key.compare(b.Key) })

	b := newBuilder()
	ix := &wireIndex{}
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
		we := wireEntry{
			key:     [4]uint64{b.str(e.Key.Arch), b.str(e.Key.Release), b.str(e.Key.Distro), b.str(e.Key.Version)},
			vmlinux: b.blob(e.VMLinux, e.Key.Arch+"\x00vmlinux"),
		}
		for j, m := range e.Modules {
			if !validModuleName(m.Name) || len(m.Split) == 0 {
				return fmt.Errorf("entry %s: module %d (%q): bad name or no split BTF", e.Key, j, m.Name)
			}
			if j > 0 && m.Name == e.Modules[j-1].Name {
				return fmt.Errorf("entry %s: duplicate module %s", e.Key, m.Name)
			}
			wm := wireModule{name: b.str(m.Name), split: b.blob(m.Split, e.Key.Arch+"\x00split\x00"+m.Name)}
			if len(m.Base) != 0 {
				wm.base = b.blob(m.Base, e.Key.Arch+"\x00base\x00"+m.Name) + 1
			}
			we.modules = append(we.modules, wm)
		}
		ix.entries = append(ix.entries, we)
	}
	ix.strings = b.strings

	data, err := b.compress(ix, maxDict)
	if err != nil {
		return err
	}
	index, err := compressPlain(ix.marshal())
	if err != nil {
		return err
	}

	out := make([]byte, 0, fixedHeader+len(index)+len(data))
	out = append(out, payloadMagic...)
	out = binary.LittleEndian.AppendUint32(out, formatVersion)
	out = binary.LittleEndian.AppendUint32(out, 0) // checksum, below
	out = binary.LittleEndian.AppendUint32(out, uint32(len(index)))
	out = append(out, index...)
	out = append(out, data...)
	binary.LittleEndian.PutUint32(out[12:], crc32.Checksum(out[16:], castagnoli))
	_, err = w.Write(out)
	return err
}

// builder interns strings and blobs in first-use order.
type builder struct {
	strings  []string
	strIdx   map[string]uint64
	blobs    []pendingBlob
	blobIdx  map[[sha256.Size]byte]uint64
	groups   []string
	groupIdx map[string][]uint64 // blobs per group, in first-use order
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

func newBuilder() *builder {
	return &builder{
		strIdx:   map[string]uint64{},
		blobIdx:  map[[sha256.Size]byte]uint64{},
		groupIdx: map[string][]uint64{},
	}
}

func (b *builder) str(s string) uint64 {
	i, ok := b.strIdx[s]
	if !ok {
		i = uint64(len(b.strings))
		b.strings = append(b.strings, s)
		b.strIdx[s] = i
	}
	return i
}

func (b *builder) blob(raw []byte, group string) uint64 {
	sum := sha256.Sum256(raw)
	if i, ok := b.blobIdx[sum]; ok {
		return i
	}
	i := uint64(len(b.blobs))
	b.blobIdx[sum] = i
	p := pendingBlob{raw: raw, group: group}
	if packed, ok := packBTF(raw); ok {
		// Keep the transform only if it provably reverses.
		if back, err := unpackBTF(packed, len(raw)); err == nil && bytes.Equal(back, raw) {
			p.packed = packed
		}
	}
	b.blobs = append(b.blobs, p)
	if _, ok := b.groupIdx[group]; !ok {
		b.groups = append(b.groups, group)
	}
	b.groupIdx[group] = append(b.groupIdx[group], i)
	return i
}

// compress fills ix.dicts and ix.blobs and returns the data area.
func (b *builder) compress(ix *wireIndex, maxDict int) ([]byte, error) {
	var data []byte
	ix.blobs = make([]wireBlob, len(b.blobs))
	for _, g := range b.groups {
		members := b.groupIdx[g]
		var dict []byte
		reps := map[uint64]uint64{} // blob -> offset in dict
		if maxDict > 0 {
			var err error
			dict, reps, err = b.chooseDict(members, maxDict)
			if err != nil {
				return nil, fmt.Errorf("build dictionary for %q: %w", g, err)
			}
		}
		var dictNo uint64
		var enc *zstd.Encoder
		if len(dict) > 0 {
			stored, err := compressPlain(dict)
			if err != nil {
				return nil, err
			}
			ix.dicts = append(ix.dicts, wireDict{off: uint64(len(data)), n: uint64(len(stored)), rawLen: uint64(len(dict))})
			data = append(data, stored...)
			dictNo = uint64(len(ix.dicts))
			enc, err = newEncoder(zstd.WithEncoderDictRaw(uint32(dictNo), dict))
			if err != nil {
				return nil, err
			}
		} else {
			var err error
			if enc, err = newEncoder(); err != nil {
				return nil, err
			}
		}
		for _, i := range members {
			p := &b.blobs[i]
			form := p.form()
			wb := wireBlob{rawLen: uint64(len(p.raw))}
			if p.packed != nil {
				wb.packedLen = uint64(len(p.packed))
			}
			if off, ok := reps[i]; ok {
				wb.codec, wb.dict, wb.off, wb.n = codecSlice, dictNo, off, uint64(len(form))
			} else if c := enc.EncodeAll(form, nil); len(c) < len(form) {
				wb.codec, wb.dict, wb.off, wb.n = codecZstd, dictNo, uint64(len(data)), uint64(len(c))
				data = append(data, c...)
			} else {
				wb.codec, wb.off, wb.n = codecStored, uint64(len(data)), uint64(len(form))
				data = append(data, form...)
			}
			ix.blobs[i] = wb
		}
		enc.Close()
	}
	return data, nil
}

// chooseDict picks a group's representatives greedily in first-use order:
// the first blob, then every blob that compresses poorly against the
// representatives so far, while they fit in maxDict bytes.
func (b *builder) chooseDict(members []uint64, maxDict int) ([]byte, map[uint64]uint64, error) {
	var dict []byte
	reps := map[uint64]uint64{}
	var enc *zstd.Encoder
	defer func() {
		if enc != nil {
			enc.Close()
		}
	}()
	for _, i := range members {
		form := b.blobs[i].form()
		if len(dict)+len(form) > maxDict {
			continue
		}
		if enc != nil && len(enc.EncodeAll(form, nil))*repThreshold <= len(form) {
			continue
		}
		reps[i] = uint64(len(dict))
		dict = append(dict, form...)
		if enc != nil {
			enc.Close()
		}
		var err error
		if enc, err = newEncoder(zstd.WithEncoderDictRaw(1, dict)); err != nil {
			return nil, nil, err
		}
	}
	return dict, reps, nil
}

func newEncoder(opts ...zstd.EOption) (*zstd.Encoder, error) {
	base := []zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedBestCompression),
		zstd.WithEncoderCRC(false), // the payload has its own checksum
		zstd.WithEncoderConcurrency(1),
	}
	return zstd.NewWriter(nil, append(base, opts...)...)
}

func compressPlain(b []byte) ([]byte, error) {
	enc, err := newEncoder()
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil), nil
}

// withDict makes the encoder use dict as raw history.
func withDict(dict []byte) zstd.EOption { return zstd.WithEncoderDictRaw(1, dict) }

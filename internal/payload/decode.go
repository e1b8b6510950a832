package payload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/btfembed/btfembed/runtime/kernelkey"
)

// Payload is an opened payload: header and index checked, blobs decoded
// on demand. It is safe for concurrent use; each dictionary is decompressed
// at most once.
type Payload struct {
	data  []byte // the data area
	dicts []lazyDict
	blobs []BlobRecord
	// Entries are the payload's kernels, sorted by key.
	Entries []Entry
}

// Entry is one kernel's index record, its strings resolved.
type Entry struct {
	Key kernelkey.Key
	// VMLinux is the blob index of the vmlinux BTF.
	VMLinux uint64
	// Modules are sorted by name.
	Modules []EntryModule
}

// EntryModule is one module of an Entry.
type EntryModule struct {
	Name string
	// Base is the blob index + 1 of the module's distilled base BTF, 0
	// for none; Split is the blob index of its split BTF.
	Base, Split uint64
}

type lazyDict struct {
	wire    DictRecord
	once    sync.Once
	content []byte
	err     error
}

// plainDecoder decompresses frames made without a dictionary. DecodeAll is
// safe for concurrent use.
var plainDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return newDecoder()
})

func newDecoder(opts ...zstd.DOption) (*zstd.Decoder, error) {
	base := []zstd.DOption{
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(MaxBlobLen),
		zstd.WithDecodeAllCapLimit(true), // see decodeFrame
	}
	return zstd.NewReader(nil, append(base, opts...)...)
}

// Open checks payload's header and checksum and decodes its index; it
// decompresses no kernel BTF. payload must not be modified afterwards. A
// malformed payload gives an error wrapping ErrCorrupt.
func Open(payload []byte) (*Payload, error) {
	ix, data, err := ReadIndex(payload)
	if err != nil {
		return nil, err
	}
	p := &Payload{
		data:    data,
		dicts:   make([]lazyDict, len(ix.Dicts)),
		blobs:   ix.Blobs,
		Entries: make([]Entry, len(ix.Entries)),
	}
	for i, d := range ix.Dicts {
		p.dicts[i].wire = d
	}
	str := ix.Strings
	for i, e := range ix.Entries {
		pe := &p.Entries[i]
		pe.Key = kernelkey.Key{Arch: str[e.Key[0]], Release: str[e.Key[1]], Distro: str[e.Key[2]], Version: str[e.Key[3]]}
		pe.VMLinux = e.VMLinux
		for j, m := range e.Modules {
			name := str[m.Name]
			if !ValidModuleName(name) || j > 0 && pe.Modules[j-1].Name >= name {
				return nil, fmt.Errorf("%w: entry %s: bad or unsorted module name %q", ErrCorrupt, pe.Key, name)
			}
			pe.Modules = append(pe.Modules, EntryModule{Name: name, Base: m.Base, Split: m.Split})
		}
		if i > 0 && p.Entries[i-1].Key.Compare(pe.Key) >= 0 {
			return nil, fmt.Errorf("%w: entries not sorted at %s", ErrCorrupt, pe.Key)
		}
	}
	return p, nil
}

// ReadIndex checks payload's header and checksum and returns its decoded
// and validated index and its data area.
func ReadIndex(payload []byte) (*Index, []byte, error) {
	if len(payload) < HeaderLen {
		return nil, nil, fmt.Errorf("%w: %d bytes is shorter than the header", ErrCorrupt, len(payload))
	}
	if string(payload[:8]) != Magic {
		return nil, nil, fmt.Errorf("%w: bad magic %q", ErrCorrupt, payload[:8])
	}
	le := binary.LittleEndian
	if v := le.Uint32(payload[8:]); v != Version {
		return nil, nil, fmt.Errorf("%w: format version %d, this package reads %d", ErrCorrupt, v, Version)
	}
	if want, got := le.Uint32(payload[12:]), Checksum(payload[16:]); want != got {
		return nil, nil, fmt.Errorf("%w: checksum %#08x, header says %#08x", ErrCorrupt, got, want)
	}
	n := uint64(le.Uint32(payload[16:]))
	rawLen := uint64(le.Uint32(payload[20:]))
	if n > uint64(len(payload)-HeaderLen) {
		return nil, nil, fmt.Errorf("%w: index of %d bytes overruns the payload", ErrCorrupt, n)
	}
	dec, err := plainDecoder()
	if err != nil {
		return nil, nil, err
	}
	raw, err := decodeFrame(dec, payload[HeaderLen:HeaderLen+n], rawLen)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: index: %w", ErrCorrupt, err)
	}
	data := payload[HeaderLen+n:]
	ix, err := UnmarshalIndex(raw, len(data))
	if err != nil {
		return nil, nil, err
	}
	return ix, data, nil
}

// Blob decodes blob i. The result is freshly allocated or a slice of
// dictionary content; callers must not modify it.
func (p *Payload) Blob(i uint64) ([]byte, error) {
	form, err := p.form(i)
	if err != nil || p.blobs[i].PackedLen == 0 {
		return form, err
	}
	raw, err := Unpack(form, int(p.blobs[i].RawLen))
	if err != nil {
		return nil, fmt.Errorf("blob %d: %w", i, err)
	}
	return raw, nil
}

// BlobReader returns a reader of blob i that unpacks it while it is read.
func (p *Payload) BlobReader(i uint64) (io.ReaderAt, error) {
	form, err := p.form(i)
	if err != nil {
		return nil, err
	}
	if p.blobs[i].PackedLen == 0 {
		return bytes.NewReader(form), nil
	}
	r, err := newUnpackReader(form, int(p.blobs[i].RawLen))
	if err != nil {
		return nil, fmt.Errorf("blob %d: %w", i, err)
	}
	return r, nil
}

// form decompresses blob i to its packed form (its raw form if it is not
// packed).
func (p *Payload) form(i uint64) ([]byte, error) {
	bl := p.blobs[i]
	want := bl.RawLen
	if bl.PackedLen != 0 {
		want = bl.PackedLen
	}
	switch bl.Codec {
	case CodecStored:
		return p.data[bl.Off : bl.Off+bl.N], nil
	case CodecSlice:
		content, err := p.dict(bl.Dict - 1)
		if err != nil {
			return nil, err
		}
		return content[bl.Off : bl.Off+bl.N], nil
	}
	var form []byte
	var err error
	if bl.Dict != 0 {
		var content []byte
		if content, err = p.dict(bl.Dict - 1); err != nil {
			return nil, err
		}
		form, err = decodeWithDict(uint32(bl.Dict), content, p.data[bl.Off:bl.Off+bl.N], want)
	} else {
		var dec *zstd.Decoder
		if dec, err = plainDecoder(); err != nil {
			return nil, err
		}
		form, err = decodeFrame(dec, p.data[bl.Off:bl.Off+bl.N], want)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: blob %d: %w", ErrCorrupt, i, err)
	}
	return form, nil
}

// dict decompresses dictionary i once and returns its content.
func (p *Payload) dict(i uint64) ([]byte, error) {
	d := &p.dicts[i]
	d.once.Do(func() {
		w := d.wire
		var content []byte
		var err error
		if w.Base != 0 {
			// The index guarantees the base is earlier and has no
			// base itself.
			var base []byte
			if base, err = p.dict(w.Base - 1); err != nil {
				d.err = err
				return
			}
			content, err = decodeWithDict(uint32(w.Base), base, p.data[w.Off:w.Off+w.N], w.RawLen)
		} else {
			var plain *zstd.Decoder
			if plain, err = plainDecoder(); err != nil {
				d.err = err
				return
			}
			content, err = decodeFrame(plain, p.data[w.Off:w.Off+w.N], w.RawLen)
		}
		if err != nil {
			d.err = fmt.Errorf("%w: dictionary %d: %w", ErrCorrupt, i, err)
			return
		}
		d.content = content
	})
	return d.content, d.err
}

// dictDecoder decompresses frames made with a dictionary. One decoder
// serves every dictionary, registered for the duration of a call: the
// decoding state is what costs (tens of KB), and a process selects its
// kernel about once.
var dictDecoder struct {
	sync.Mutex
	dec *zstd.Decoder
	err error
}

// decodeWithDict decompresses frame, made with dictionary content under
// zstd dictionary ID id, to want bytes.
func decodeWithDict(id uint32, content, frame []byte, want uint64) ([]byte, error) {
	d := &dictDecoder
	d.Lock()
	defer d.Unlock()
	if d.dec == nil && d.err == nil {
		d.dec, d.err = newDecoder()
	}
	if d.err != nil {
		return nil, d.err
	}
	if err := d.dec.ResetWithOptions(nil, zstd.WithDecoderDictRaw(id, content)); err != nil {
		return nil, err
	}
	// Drop the dictionary afterwards so the decoder does not keep it alive.
	defer func() { _ = d.dec.ResetWithOptions(nil, zstd.WithDecoderDictDelete(id)) }()
	return decodeFrame(d.dec, frame, want)
}

// decodeFrame decompresses one zstd frame that should hold want bytes. The
// output never grows past that, so a corrupt frame cannot make a large
// allocation.
func decodeFrame(dec *zstd.Decoder, frame []byte, want uint64) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		return nil, err
	}
	if h.HasFCS && h.FrameContentSize != want {
		return nil, fmt.Errorf("frame holds %d bytes, expected %d", h.FrameContentSize, want)
	}
	if want > MaxBlobLen {
		return nil, fmt.Errorf("frame of %d bytes is too large", want)
	}
	out, err := dec.DecodeAll(frame, make([]byte, 0, want))
	if err == nil && uint64(len(out)) != want {
		err = fmt.Errorf("frame holds %d bytes, expected %d", len(out), want)
	}
	return out, err
}

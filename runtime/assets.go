package runtime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/btfembed/btfembed/runtime/kernelkey"
	"github.com/cilium/ebpf/btf"
	"github.com/klauspost/compress/zstd"
)

// Assets is an opened payload. It is safe for concurrent use; each kernel's
// BTF is decompressed and parsed at most once, on first use.
type Assets struct {
	data    []byte // the data area
	strings []string
	dicts   []lazyDict
	blobs   []wireBlob
	entries []assetEntry
	keys    []Key // entries' keys, sorted
}

type assetEntry struct {
	key     Key
	vmlinux uint64
	modules []wireModule

	once   sync.Once
	spec   *btf.Spec
	modRaw []Module
	// modSpecs are loaded with spec, once: cilium/ebpf v0.22 is not safe
	// for concurrent use of several split specs over one base.
	modSpecs map[string]*btf.Spec
	loadErr  error
}

type lazyDict struct {
	wire    wireDict
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
		zstd.WithDecoderMaxMemory(maxBlobLen),
		zstd.WithDecodeAllCapLimit(true), // see decodeFrame
	}
	return zstd.NewReader(nil, append(base, opts...)...)
}

// Open parses payload's header and index; it decompresses no kernel BTF.
// payload must not be modified afterwards. A malformed payload gives an
// error wrapping ErrCorrupt.
func Open(payload []byte) (*Assets, error) {
	if len(payload) < fixedHeader {
		return nil, fmt.Errorf("%w: %d bytes is shorter than the header", ErrCorrupt, len(payload))
	}
	if string(payload[:8]) != Magic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrCorrupt, payload[:8])
	}
	le := binary.LittleEndian
	if v := le.Uint32(payload[8:]); v != formatVersion {
		return nil, fmt.Errorf("%w: format version %d, this package reads %d", ErrCorrupt, v, formatVersion)
	}
	if want, got := le.Uint32(payload[12:]), crc32.Checksum(payload[16:], castagnoli); want != got {
		return nil, fmt.Errorf("%w: checksum %#08x, header says %#08x", ErrCorrupt, got, want)
	}
	return openVerified(payload)
}

// openVerified parses a payload whose checksum has been checked.
func openVerified(payload []byte) (*Assets, error) {
	n := uint64(binary.LittleEndian.Uint32(payload[16:]))
	rawLen := uint64(binary.LittleEndian.Uint32(payload[20:]))
	if n > uint64(len(payload)-fixedHeader) {
		return nil, fmt.Errorf("%w: index of %d bytes overruns the payload", ErrCorrupt, n)
	}
	dec, err := plainDecoder()
	if err != nil {
		return nil, err
	}
	raw, err := decodeFrame(dec, payload[fixedHeader:fixedHeader+n], rawLen)
	if err != nil {
		return nil, fmt.Errorf("%w: index: %w", ErrCorrupt, err)
	}
	data := payload[fixedHeader+n:]
	ix, err := unmarshalIndex(raw, len(data))
	if err != nil {
		return nil, err
	}
	a := &Assets{
		data:    data,
		strings: ix.strings,
		dicts:   make([]lazyDict, len(ix.dicts)),
		blobs:   ix.blobs,
		entries: make([]assetEntry, len(ix.entries)),
		keys:    make([]Key, len(ix.entries)),
	}
	for i, d := range ix.dicts {
		a.dicts[i].wire = d
	}
	for i, e := range ix.entries {
		ae := &a.entries[i]
		ae.key = Key{Arch: a.strings[e.key[0]], Release: a.strings[e.key[1]], Distro: a.strings[e.key[2]], Version: a.strings[e.key[3]]}
		ae.vmlinux, ae.modules = e.vmlinux, e.modules
		a.keys[i] = ae.key
		for j, m := range e.modules {
			if name := a.strings[m.name]; !validModuleName(name) || j > 0 && a.strings[e.modules[j-1].name] >= name {
				return nil, fmt.Errorf("%w: entry %s: bad or unsorted module name %q", ErrCorrupt, ae.key, name)
			}
		}
		if i > 0 && a.entries[i-1].key.Compare(ae.key) >= 0 {
			return nil, fmt.Errorf("%w: entries not sorted at %s", ErrCorrupt, ae.key)
		}
	}
	return a, nil
}

// Kernels lists the embedded kernels in key order.
func (a *Assets) Kernels() []Key {
	return slices.Clone(a.keys)
}

// Lookup returns the embedded BTF for exactly key (its Arch normalized
// with NormalizeArch). An unknown key gives an error wrapping
// ErrKernelNotSupported.
func (a *Assets) Lookup(key Key) (*Selection, error) {
	key.Arch, _ = kernelkey.NormalizeArch(key.Arch)
	i, ok := slices.BinarySearchFunc(a.keys, key, Key.Compare)
	if !ok {
		return nil, &NotSupportedError{Key: key, Embedded: len(a.entries)}
	}
	return a.selection(&a.entries[i])
}

// selection loads entry e (once) and wraps it in a Selection.
func (a *Assets) selection(e *assetEntry) (*Selection, error) {
	spec, modRaw, err := a.load(e)
	if err != nil {
		return nil, err
	}
	sel := &Selection{Source: SourceEmbedded, Key: e.key, Spec: spec, ModuleBTF: modRaw}
	if len(e.modSpecs) > 0 {
		sel.Modules = maps.Clone(e.modSpecs)
	}
	return sel, nil
}

// load decompresses and parses entry e, once.
func (a *Assets) load(e *assetEntry) (*btf.Spec, []Module, error) {
	e.once.Do(func() { e.spec, e.modRaw, e.modSpecs, e.loadErr = a.loadEntry(e) })
	return e.spec, e.modRaw, e.loadErr
}

func (a *Assets) loadEntry(e *assetEntry) (*btf.Spec, []Module, map[string]*btf.Spec, error) {
	// Relocating a distilled module needs the raw vmlinux BTF; otherwise
	// cilium/ebpf reads it while it is unpacked, never whole.
	var r io.ReaderAt
	var raw []byte
	var err error
	if slices.ContainsFunc(e.modules, func(m wireModule) bool { return m.base != 0 }) {
		raw, err = a.blob(e.vmlinux)
		r = bytes.NewReader(raw)
	} else {
		r, err = a.blobReader(e.vmlinux)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("embedded BTF for %s: %w", e.key, err)
	}
	// Raw BTF, never ELF: skip LoadSpecFromReader's ELF probe.
	spec, err := btf.LoadSplitSpecFromReader(r, nil)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("embedded BTF for %s: %w", e.key, err)
	}
	var mods []Module
	for _, m := range e.modules {
		mod := Module{Name: a.strings[m.name]}
		if m.base != 0 {
			if mod.Base, err = a.blob(m.base - 1); err != nil {
				return nil, nil, nil, fmt.Errorf("embedded BTF for %s: module %s base: %w", e.key, mod.Name, err)
			}
		}
		if mod.Split, err = a.blob(m.split); err != nil {
			return nil, nil, nil, fmt.Errorf("embedded BTF for %s: module %s: %w", e.key, mod.Name, err)
		}
		mods = append(mods, mod)
	}
	specs, err := LoadModules(mods, raw, spec)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("embedded BTF for %s: %w", e.key, err)
	}
	return spec, mods, specs, nil
}

// blob decodes blob i. The result is freshly allocated or a slice of
// dictionary content; callers must not modify it.
func (a *Assets) blob(i uint64) ([]byte, error) {
	form, err := a.form(i)
	if err != nil || a.blobs[i].packedLen == 0 {
		return form, err
	}
	raw, err := unpackBTF(form, int(a.blobs[i].rawLen))
	if err != nil {
		return nil, fmt.Errorf("blob %d: %w", i, err)
	}
	return raw, nil
}

// blobReader returns a reader of blob i that unpacks it while it is read.
func (a *Assets) blobReader(i uint64) (io.ReaderAt, error) {
	form, err := a.form(i)
	if err != nil {
		return nil, err
	}
	if a.blobs[i].packedLen == 0 {
		return bytes.NewReader(form), nil
	}
	r, err := newUnpackReader(form, int(a.blobs[i].rawLen))
	if err != nil {
		return nil, fmt.Errorf("blob %d: %w", i, err)
	}
	return r, nil
}

// form decompresses blob i to its packed form (its raw form if it is not
// packed).
func (a *Assets) form(i uint64) ([]byte, error) {
	bl := a.blobs[i]
	want := bl.rawLen
	if bl.packedLen != 0 {
		want = bl.packedLen
	}
	switch bl.codec {
	case codecStored:
		return a.data[bl.off : bl.off+bl.n], nil
	case codecSlice:
		content, err := a.dict(bl.dict - 1)
		if err != nil {
			return nil, err
		}
		return content[bl.off : bl.off+bl.n], nil
	}
	var form []byte
	var err error
	if bl.dict != 0 {
		var content []byte
		if content, err = a.dict(bl.dict - 1); err != nil {
			return nil, err
		}
		form, err = decodeWithDict(uint32(bl.dict), content, a.data[bl.off:bl.off+bl.n], want)
	} else {
		var dec *zstd.Decoder
		if dec, err = plainDecoder(); err != nil {
			return nil, err
		}
		form, err = decodeFrame(dec, a.data[bl.off:bl.off+bl.n], want)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: blob %d: %w", ErrCorrupt, i, err)
	}
	return form, nil
}

// dict decompresses dictionary i once and returns its content.
func (a *Assets) dict(i uint64) ([]byte, error) {
	d := &a.dicts[i]
	d.once.Do(func() {
		w := d.wire
		var content []byte
		var err error
		if w.base != 0 {
			// The index guarantees the base is earlier and has no
			// base itself.
			var base []byte
			if base, err = a.dict(w.base - 1); err != nil {
				d.err = err
				return
			}
			content, err = decodeWithDict(uint32(w.base), base, a.data[w.off:w.off+w.n], w.rawLen)
		} else {
			var plain *zstd.Decoder
			if plain, err = plainDecoder(); err != nil {
				d.err = err
				return
			}
			content, err = decodeFrame(plain, a.data[w.off:w.off+w.n], w.rawLen)
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
	if want > maxBlobLen {
		return nil, fmt.Errorf("frame of %d bytes is too large", want)
	}
	out, err := dec.DecodeAll(frame, make([]byte, 0, want))
	if err == nil && uint64(len(out)) != want {
		err = fmt.Errorf("frame holds %d bytes, expected %d", len(out), want)
	}
	return out, err
}

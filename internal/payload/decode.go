package payload

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// Payload is an opened payload: header and directory checked, blocks and
// blobs decoded on demand. It is safe for concurrent use; each block and
// dictionary is decompressed at most once, and stays charged to the budget
// of the call that decoded it (the runtime passes one budget to every
// call, so what a payload caches counts once, for its whole life).
type Payload struct {
	blocksArea, data []byte
	dir              *directory
	blocks           []lazy[[]Entry]

	mu       sync.Mutex
	dicts    map[DictRecord]*lazy[[]byte]
	verdicts lazy[*VerdictTable]
	objects  lazy[[]ObjectRecordDigests]
	families lazy[[]FamilyRecord]
}

// lazy is a value decoded once. Unlike a sync.Once, a decode that failed
// for want of budget is not remembered: it is tried again by the next
// call, which may have more budget (the runtime lets go of kernels it
// holds when a charge fails).
type lazy[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
	err  error
}

func (l *lazy[T]) get(decode func() (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.v, l.err = decode()
		l.done = !errors.Is(l.err, ErrOverBudget)
	}
	return l.v, l.err
}

// Open checks payload's header and checksum and decodes its directory; it
// decompresses no block and no kernel BTF, so it costs the same however
// many kernels the payload holds. payload must not be modified
// afterwards. A malformed payload gives an error wrapping ErrCorrupt.
func Open(payload []byte) (*Payload, error) { return OpenBudget(payload, nil) }

// OpenBudget is Open, charging bud for the decoded directory, which the
// Payload holds.
func OpenBudget(payload []byte, bud *Budget) (*Payload, error) {
	if len(payload) < HeaderLen {
		return nil, fmt.Errorf("%w: %d bytes is shorter than the header", ErrCorrupt, len(payload))
	}
	if string(payload[:8]) != Magic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrCorrupt, payload[:8])
	}
	le := binary.LittleEndian
	version := le.Uint32(payload[8:])
	switch version {
	case Version, MinVersion:
	case 2, 3:
		return nil, fmt.Errorf("%w: format %d, written by an older btfembed; this one reads format %d (DEFLATE instead of zstd, so an agent links no zstd decoder): run go generate to write it again", ErrCorrupt, version, Version)
	default:
		return nil, fmt.Errorf("%w: format version %d, this package reads %d", ErrCorrupt, version, Version)
	}
	if want, got := le.Uint32(payload[12:]), Checksum(payload[16:]); want != got {
		return nil, fmt.Errorf("%w: checksum %#08x, header says %#08x", ErrCorrupt, got, want)
	}
	rest := payload[HeaderLen:]
	dirLen, blocksLen := uint64(le.Uint32(payload[16:])), uint64(le.Uint32(payload[20:]))
	if dirLen > uint64(len(rest)) || blocksLen > uint64(len(rest))-dirLen {
		return nil, fmt.Errorf("%w: directory (%d bytes) and blocks (%d) overrun the payload", ErrCorrupt, dirLen, blocksLen)
	}
	dir, err := readDirectory(rest[:dirLen], version, int(blocksLen), len(rest)-int(dirLen+blocksLen), bud)
	if err != nil {
		return nil, err
	}
	if err := bud.Charge(uint64(len(dir.blocks))*sizeLazyBlock, "directory"); err != nil {
		bud.Release(dir.held)
		return nil, err
	}
	return &Payload{
		blocksArea: rest[dirLen : dirLen+blocksLen],
		data:       rest[dirLen+blocksLen:],
		dir:        dir,
		blocks:     make([]lazy[[]Entry], len(dir.blocks)),
		dicts:      map[DictRecord]*lazy[[]byte]{},
	}, nil
}

// Len is the number of kernels the directory announces.
func (p *Payload) Len() int { return int(p.dir.entries) }

// ModuleNames lists, sorted, the modules any entry of arch has.
func (p *Payload) ModuleNames(arch string) []string { return p.dir.modules[arch] }

// HasModules says whether any entry has module BTF. It reads the
// directory only: every entry's modules are in its list (readBlock).
func (p *Payload) HasModules() bool {
	for _, names := range p.dir.modules {
		if len(names) > 0 {
			return true
		}
	}
	return false
}

// block decompresses and decodes block i, once, charging bud the first
// time with what the decoded block holds (see decodeFrame).
func (p *Payload) block(i int, bud *Budget) ([]Entry, error) {
	ref := p.dir.blocks[i]
	var next *kernelkey.Key
	if i+1 < len(p.dir.blocks) {
		next = &p.dir.blocks[i+1].first
	}
	return decodeFrame(p, &p.blocks[i], ref, fmt.Sprintf("block %d", i), bud, func(raw []byte, bud *Budget) ([]Entry, error) {
		return readBlock(i, raw, ref.first, next, len(p.data), p.dir, bud)
	})
}

// section is decodeFrame for a section, which a payload may not have (no
// frame): that is the zero T.
func section[T any](p *Payload, l *lazy[T], ref blockRef, what string, bud *Budget, parse func(raw []byte, bud *Budget) (T, error)) (T, error) {
	if ref.n == 0 {
		var zero T
		return zero, nil
	}
	return decodeFrame(p, l, ref, what, bud, parse)
}

// decodeFrame decompresses and decodes the frame ref of the blocks area (a
// block or a section), once per payload (l), charging bud the first time
// with what the decoded frame holds: parse charges its records, and the
// frame's bytes stay charged, which the reader's copy of them takes and
// its strings share.
func decodeFrame[T any](p *Payload, l *lazy[T], ref blockRef, what string, bud *Budget, parse func(raw []byte, bud *Budget) (T, error)) (T, error) {
	return l.get(func() (T, error) {
		var zero T
		// The frame's bytes, and the reader's copy of them.
		if err := bud.Charge(2*ref.raw, what); err != nil {
			return zero, err
		}
		raw, err := inflate(nil, p.blocksArea[ref.off:ref.off+ref.n], ref.raw)
		if err != nil {
			bud.Release(2 * ref.raw)
			return zero, fmt.Errorf("%w: %s: %w", ErrCorrupt, what, err)
		}
		v, err := parse(raw, bud)
		if err != nil {
			bud.Release(2 * ref.raw) // parse gave back its own
			return zero, err
		}
		bud.Release(ref.raw) // raw itself
		return v, nil
	})
}

// blockOf is the index of the block that would hold key, -1 if none.
//
// Searches here use sort.Search, not slices.BinarySearchFunc: each
// instantiation of that, over a struct of several strings, costs every
// agent about 3 KB of code, names and tables (docs/performance.md).
func (p *Payload) blockOf(key kernelkey.Key) int {
	return sort.Search(len(p.dir.blocks), func(i int) bool { return p.dir.blocks[i].first.Compare(key) > 0 }) - 1
}

// Find returns the entry for exactly key, decoding only its block, within
// bud.
func (p *Payload) Find(key kernelkey.Key, bud *Budget) (Entry, bool, error) {
	bi := p.blockOf(key)
	if bi < 0 {
		return Entry{}, false, nil
	}
	entries, err := p.block(bi, bud)
	if err != nil {
		return Entry{}, false, err
	}
	j := sort.Search(len(entries), func(i int) bool { return entries[i].Key.Compare(key) >= 0 })
	if j == len(entries) || entries[j].Key != key {
		return Entry{}, false, nil
	}
	return entries[j], true, nil
}

// Release returns the entries of arch and release, in key order, decoding
// only the blocks that hold them, within bud.
func (p *Payload) Release(arch, release string, bud *Budget) ([]Entry, error) {
	start := kernelkey.Key{Arch: arch, Release: release}
	var out []Entry
	for bi := max(p.blockOf(start), 0); bi < len(p.blocks); bi++ {
		entries, err := p.block(bi, bud)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Key.Compare(start) < 0 {
				continue
			}
			if e.Key.Arch != arch || e.Key.Release != release {
				return out, nil
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// Keys decodes every block, within bud, and returns every entry's key in
// order. The result is the caller's: a quarter of what the blocks hold.
func (p *Payload) Keys(bud *Budget) ([]kernelkey.Key, error) {
	var out []kernelkey.Key
	for bi := range p.blocks {
		entries, err := p.block(bi, bud)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			out = append(out, e.Key)
		}
	}
	if uint64(len(out)) != p.dir.entries {
		return nil, fmt.Errorf("%w: %d entries, directory says %d", ErrCorrupt, len(out), p.dir.entries)
	}
	return out, nil
}

// Blob decodes b, charging bud for the bytes it returns (b.Held(), which
// the caller releases when it drops them) and, while it runs, for the
// packed form it unpacks them from. The result is freshly allocated or a
// slice of the payload or of dictionary content; callers must not modify
// it.
func (p *Payload) Blob(b Blob, bud *Budget) ([]byte, error) {
	what := fmt.Sprintf("blob at %d", b.Off)
	if err := bud.Charge(b.Held(), what); err != nil {
		return nil, err
	}
	raw, err := p.blob(b, bud, what)
	if err != nil {
		bud.Release(b.Held())
	}
	return raw, err
}

func (p *Payload) blob(b Blob, bud *Budget, what string) ([]byte, error) {
	if b.PackedLen == 0 {
		return p.form(b, bud)
	}
	var tmp uint64 // the packed form, if decompressed here
	if b.Codec == CodecDeflate {
		tmp = b.PackedLen
	}
	if err := bud.Charge(tmp, what); err != nil {
		return nil, err
	}
	defer bud.Release(tmp)
	form, err := p.form(b, bud)
	if err != nil {
		return nil, err
	}
	raw, err := Unpack(form, int(b.RawLen))
	if err != nil {
		return nil, fmt.Errorf("%w: blob at %d: %w", ErrCorrupt, b.Off, err)
	}
	return raw, nil
}

// Held is how many bytes Payload.Blob allocates for b's raw form: its raw
// length where it is decompressed or unpacked, 0 where the raw form is a
// slice of the payload or of a dictionary.
func (b Blob) Held() uint64 {
	if b.Codec == CodecDeflate || b.PackedLen != 0 {
		return b.RawLen
	}
	return 0
}

// form decompresses b to its packed form (its raw form if it is not
// packed); the caller has charged whatever that allocates.
func (p *Payload) form(bl Blob, bud *Budget) ([]byte, error) {
	switch bl.Codec {
	case CodecStored:
		return p.data[bl.Off : bl.Off+bl.N], nil
	case CodecSlice:
		content, err := p.dict(bl.Dict, bl.DictBase, bud)
		if err != nil {
			return nil, err
		}
		return content[bl.Off : bl.Off+bl.N], nil
	}
	var dict []byte
	if bl.Dict.ID != 0 {
		var err error
		if dict, err = p.dict(bl.Dict, bl.DictBase, bud); err != nil {
			return nil, err
		}
	}
	form, err := inflate(dict, p.data[bl.Off:bl.Off+bl.N], bl.formLen())
	if err != nil {
		return nil, fmt.Errorf("%w: blob at %d: %w", ErrCorrupt, bl.Off, err)
	}
	return form, nil
}

// dict decompresses dictionary d, stored against base (ID 0: none), once
// per payload, and returns its content. Blocks repeat the records of the
// dictionaries they share; the whole record is the key, so a corrupt copy
// cannot stand for another. bud is charged the content the first time.
func (p *Payload) dict(d, base DictRecord, bud *Budget) ([]byte, error) {
	local := d
	local.Base = base.ID // the block-local base number is not payload-wide
	p.mu.Lock()
	ld := p.dicts[local]
	if ld == nil {
		// The map holds at most the dictionary records of the blocks
		// decoded, each charged a slot with its block.
		ld = &lazy[[]byte]{}
		p.dicts[local] = ld
	}
	p.mu.Unlock()
	return ld.get(func() ([]byte, error) {
		var preset []byte // the base's content, if any
		if base.ID != 0 {
			// readBlock guarantees the base has no base itself.
			var err error
			if preset, err = p.dict(base, DictRecord{}, bud); err != nil {
				return nil, err
			}
		}
		if err := bud.Charge(d.RawLen, fmt.Sprintf("dictionary %d", d.ID)); err != nil {
			return nil, err
		}
		content, err := inflate(preset, p.data[d.Off:d.Off+d.N], d.RawLen)
		if err != nil {
			bud.Release(d.RawLen)
			return nil, fmt.Errorf("%w: dictionary %d: %w", ErrCorrupt, d.ID, err)
		}
		return content, nil
	})
}

// inflate decompresses stream, raw DEFLATE (RFC 1951) made against
// dictionary content dict (nil: none), to exactly want bytes: the output
// never grows past that, so a corrupt stream cannot make a large
// allocation, and a stream that holds fewer or more bytes, or is followed
// by any, is an error.
//
// DEFLATE and not zstd, which compresses the payload's BTF better: every
// cilium/ebpf agent already links compress/flate (debug/elf decompresses
// sections with it), so the decoder costs an agent nothing, where zstd's
// cost it 125 KB of code (docs/performance.md, binary cost). DEFLATE
// sees only the last 32 KiB of a dictionary; the encoder keeps
// dictionaries within that.
func inflate(dict, stream []byte, want uint64) ([]byte, error) {
	if want > MaxBlobLen {
		return nil, fmt.Errorf("stream of %d bytes is too large", want)
	}
	src := bytes.NewReader(stream)
	r := flate.NewReaderDict(src, dict)
	out := make([]byte, want)
	if _, err := io.ReadFull(r, out); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("stream holds fewer than %d bytes", want)
		}
		return nil, err
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		if err != nil && err != io.EOF {
			return nil, err
		}
		return nil, fmt.Errorf("stream holds more than %d bytes", want)
	}
	if src.Len() != 0 {
		return nil, fmt.Errorf("%d bytes follow the stream", src.Len())
	}
	return out, nil
}

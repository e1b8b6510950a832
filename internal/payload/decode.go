package payload

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/btfembed/btfembed/runtime/kernelkey"
)

// Payload is an opened payload: header and directory checked, blocks and
// blobs decoded on demand. It is safe for concurrent use; each block and
// dictionary is decompressed at most once.
type Payload struct {
	blocksArea, data []byte
	dir              *directory
	blocks           []lazyBlock

	mu    sync.Mutex
	dicts map[DictRecord]*lazyDict

	verdicts struct {
		once  sync.Once
		done  atomic.Bool // once has run: later calls are not charged
		table *VerdictTable
		err   error
	}
}

type lazyBlock struct {
	once    sync.Once
	done    atomic.Bool // decoded: later calls are not charged
	entries []Entry
	err     error
}

type lazyDict struct {
	once    sync.Once
	done    atomic.Bool
	content []byte
	err     error
}

// Open checks payload's header and checksum and decodes its directory; it
// decompresses no block and no kernel BTF, so it costs the same however
// many kernels the payload holds. payload must not be modified
// afterwards. A malformed payload gives an error wrapping ErrCorrupt.
func Open(payload []byte) (*Payload, error) {
	if len(payload) < HeaderLen {
		return nil, fmt.Errorf("%w: %d bytes is shorter than the header", ErrCorrupt, len(payload))
	}
	if string(payload[:8]) != Magic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrCorrupt, payload[:8])
	}
	le := binary.LittleEndian
	version := le.Uint32(payload[8:])
	switch version {
	case Version:
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
	dir, err := readDirectory(rest[:dirLen], int(blocksLen), len(rest)-int(dirLen+blocksLen))
	if err != nil {
		return nil, err
	}
	return &Payload{
		blocksArea: rest[dirLen : dirLen+blocksLen],
		data:       rest[dirLen+blocksLen:],
		dir:        dir,
		blocks:     make([]lazyBlock, len(dir.blocks)),
		dicts:      map[DictRecord]*lazyDict{},
	}, nil
}

// Len is the number of kernels the directory announces.
func (p *Payload) Len() int { return int(p.dir.entries) }

// ModuleNames lists, sorted, the modules any entry of arch has.
func (p *Payload) ModuleNames(arch string) []string { return p.dir.modules[arch] }

// block decompresses and decodes block i, once, charging bud the first
// time.
func (p *Payload) block(i int, bud *Budget) ([]Entry, error) {
	b := &p.blocks[i]
	if !b.done.Load() {
		if err := bud.Charge(p.dir.blocks[i].raw, fmt.Sprintf("block %d", i)); err != nil {
			return nil, err
		}
	}
	b.once.Do(func() {
		defer b.done.Store(true)
		ref := p.dir.blocks[i]
		raw, err := inflate(nil, p.blocksArea[ref.off:ref.off+ref.n], ref.raw)
		if err != nil {
			b.err = fmt.Errorf("%w: block %d: %w", ErrCorrupt, i, err)
			return
		}
		var next *kernelkey.Key
		if i+1 < len(p.dir.blocks) {
			next = &p.dir.blocks[i+1].first
		}
		b.entries, b.err = readBlock(i, raw, ref.first, next, len(p.data), p.dir)
	})
	return b.entries, b.err
}

// blockOf is the index of the block that would hold key, -1 if none.
func (p *Payload) blockOf(key kernelkey.Key) int {
	i, found := slices.BinarySearchFunc(p.dir.blocks, key, func(b blockRef, k kernelkey.Key) int { return b.first.Compare(k) })
	if found {
		return i
	}
	return i - 1
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
	j, ok := slices.BinarySearchFunc(entries, key, func(e Entry, k kernelkey.Key) int { return e.Key.Compare(k) })
	if !ok {
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

// Entries decodes every block, within bud, and returns all entries in key
// order.
func (p *Payload) Entries(bud *Budget) ([]Entry, error) {
	var out []Entry
	for bi := range p.blocks {
		entries, err := p.block(bi, bud)
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
	}
	if uint64(len(out)) != p.dir.entries {
		return nil, fmt.Errorf("%w: %d entries, directory says %d", ErrCorrupt, len(out), p.dir.entries)
	}
	return out, nil
}

// Blob decodes b within bud, which is charged its raw length: the caller
// parses it. The result is freshly allocated or a slice of dictionary
// content; callers must not modify it.
func (p *Payload) Blob(b Blob, bud *Budget) ([]byte, error) {
	form, err := p.form(b, bud)
	if err != nil || b.PackedLen == 0 {
		return form, err
	}
	raw, err := Unpack(form, int(b.RawLen))
	if err != nil {
		return nil, fmt.Errorf("%w: blob at %d: %w", ErrCorrupt, b.Off, err)
	}
	return raw, nil
}

// BlobReader returns a reader of b that unpacks it while it is read,
// charging bud as Blob does.
func (p *Payload) BlobReader(b Blob, bud *Budget) (io.ReaderAt, error) {
	form, err := p.form(b, bud)
	if err != nil {
		return nil, err
	}
	if b.PackedLen == 0 {
		return bytes.NewReader(form), nil
	}
	r, err := newUnpackReader(form, int(b.RawLen))
	if err != nil {
		return nil, fmt.Errorf("%w: blob at %d: %w", ErrCorrupt, b.Off, err)
	}
	return r, nil
}

// form decompresses b to its packed form (its raw form if it is not
// packed), charging bud the raw length, and the packed form where it is
// decompressed here.
func (p *Payload) form(bl Blob, bud *Budget) ([]byte, error) {
	want := bl.formLen()
	what := fmt.Sprintf("blob at %d", bl.Off)
	if err := bud.Charge(bl.RawLen, what); err != nil {
		return nil, err
	}
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
	if bl.PackedLen != 0 {
		if err := bud.Charge(want, what); err != nil {
			return nil, err
		}
	}
	var dict []byte
	if bl.Dict.ID != 0 {
		var err error
		if dict, err = p.dict(bl.Dict, bl.DictBase, bud); err != nil {
			return nil, err
		}
	}
	form, err := inflate(dict, p.data[bl.Off:bl.Off+bl.N], want)
	if err != nil {
		return nil, fmt.Errorf("%w: blob at %d: %w", ErrCorrupt, bl.Off, err)
	}
	return form, nil
}

// dict decompresses dictionary d, stored against base (ID 0: none), once
// per payload, and returns its content. Blocks repeat the records of the
// dictionaries they share; the whole record is the key, so a corrupt copy
// cannot stand for another. bud is charged the first time.
func (p *Payload) dict(d, base DictRecord, bud *Budget) ([]byte, error) {
	local := d
	local.Base = base.ID // the block-local base number is not payload-wide
	p.mu.Lock()
	ld := p.dicts[local]
	if ld == nil {
		ld = &lazyDict{}
		p.dicts[local] = ld
	}
	p.mu.Unlock()
	if !ld.done.Load() {
		if err := bud.Charge(d.RawLen, fmt.Sprintf("dictionary %d", d.ID)); err != nil {
			return nil, err
		}
	}
	ld.once.Do(func() {
		defer ld.done.Store(true)
		var preset []byte // the base's content, if any
		if base.ID != 0 {
			// readBlock guarantees the base has no base itself.
			var err error
			if preset, err = p.dict(base, DictRecord{}, bud); err != nil {
				ld.err = err
				return
			}
		}
		content, err := inflate(preset, p.data[d.Off:d.Off+d.N], d.RawLen)
		if err != nil {
			ld.err = fmt.Errorf("%w: dictionary %d: %w", ErrCorrupt, d.ID, err)
			return
		}
		ld.content = content
	})
	return ld.content, ld.err
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

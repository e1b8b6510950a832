package corpus

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"

	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/pahole"
)

// dwarfCacheVersion changes when what importDWARF makes from the same
// input and pahole changes (the flag table, the entry's layout).
const dwarfCacheVersion = "dwarf kernel 2"

// dwarfCache is the cache entry of one importDWARF source. Its zero value
// (no cache, or a cache that could not be opened) misses and stores
// nothing.
type dwarfCache struct {
	c      *cache.Cache
	key    cache.Key
	source string
	opts   *ImportOptions
}

// openDWARFCache keys the source's entry by the digest of its contents,
// the key its path tells, pahole's version and the options that change
// the kernel made.
func openDWARFCache(source string, tool *pahole.Tool, opts *ImportOptions) dwarfCache {
	dc := dwarfCache{source: source, opts: opts}
	if opts == nil || opts.CacheDir == "" {
		return dc
	}
	c, err := cache.Open(opts.CacheDir)
	if err != nil {
		opts.warn(fmt.Errorf("%s: %w", source, err))
		return dc
	}
	digest, err := c.FileDigest(source)
	if err != nil {
		opts.warn(fmt.Errorf("cache: %s: %w", source, err))
		return dc
	}
	path := inputKey(source).key
	noModules := []byte{0}
	if opts.NoModules {
		noModules[0] = 1
	}
	dc.c = c
	parts := [][]byte{[]byte(dwarfCacheVersion), digest[:], []byte(tool.Version.String()), noModules}
	for _, k := range []kernelkey.Key{path, opts.Key} {
		parts = append(parts, []byte(k.Arch), []byte(k.Release), []byte(k.Distro), []byte(k.Version))
	}
	dc.key = cache.NewKey(parts...)
	return dc
}

// cachedDWARF is a kernel as stored: paths are members of the source, so
// the entry serves the same contents wherever they are.
type cachedDWARF struct {
	Key     kernelkey.Key
	KeyFrom string
	Member  string
	VMLinux []byte
	Modules []cachedDWARFModule
	Skipped []cachedSkip
}

type cachedDWARFModule struct {
	Name, Member string
	BTF          []byte
}

// cachedSkip is a module pahole or the check refused, reported again on a
// hit.
type cachedSkip struct{ Member, Err string }

// get returns the cached kernel, checked as a fresh one would be: the
// cache is not trusted more than the input.
func (dc dwarfCache) get() (*Kernel, []error, bool) {
	if dc.c == nil {
		return nil, nil, false
	}
	data, ok := dc.c.Get(dc.key)
	if !ok {
		return nil, nil, false
	}
	k, skipped, err := dc.decode(data)
	if err != nil {
		dc.opts.warn(fmt.Errorf("cache entry of %s: %w", dc.source, err))
		return nil, nil, false
	}
	return k, skipped, true
}

func (dc dwarfCache) decode(data []byte) (*Kernel, []error, error) {
	var e cachedDWARF
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&e); err != nil {
		return nil, nil, err
	}
	base, err := extract.ParseBTF(e.VMLinux, nil)
	if err != nil {
		return nil, nil, err
	}
	if base.NextID() == base.FirstID() {
		return nil, nil, fmt.Errorf("%w: no types", errNoBTF)
	}
	k := &Kernel{Key: e.Key, keyFrom: e.KeyFrom, Path: memberPath(dc.source, e.Member), VMLinux: e.VMLinux}
	for _, m := range e.Modules {
		if err := checkModule(m.BTF, base); err != nil {
			return nil, nil, fmt.Errorf("module %s: %w", m.Name, err)
		}
		k.Modules = append(k.Modules, Module{Name: m.Name, Path: memberPath(dc.source, m.Member), BTF: m.BTF})
	}
	var skipped []error
	for _, s := range e.Skipped {
		skipped = append(skipped, &KernelError{Path: memberPath(dc.source, s.Member), Err: errors.New(s.Err)})
	}
	return k, skipped, nil
}

// put stores a kernel importDWARF made.
func (dc dwarfCache) put(k *Kernel, skipped []error) {
	if dc.c == nil {
		return
	}
	e := cachedDWARF{Key: k.Key, KeyFrom: k.keyFrom, Member: dc.member(k.Path), VMLinux: k.VMLinux}
	for _, m := range k.Modules {
		e.Modules = append(e.Modules, cachedDWARFModule{Name: m.Name, Member: dc.member(m.Path), BTF: m.BTF})
	}
	for _, err := range skipped {
		var ke *KernelError
		if errors.As(err, &ke) {
			e.Skipped = append(e.Skipped, cachedSkip{Member: dc.member(ke.Path), Err: ke.Err.Error()})
		}
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&e); err != nil {
		dc.opts.warn(fmt.Errorf("cache: %s: %w", dc.source, err))
		return
	}
	if err := dc.c.Put(dc.key, b.Bytes()); err != nil {
		dc.opts.warn(fmt.Errorf("%s: %w", dc.source, err))
	}
}

// member is a path made by memberPath without its source.
func (dc dwarfCache) member(path string) string {
	if path == dc.source {
		return ""
	}
	return path[len(dc.source)+1:]
}

// forwardWarnings passes what the cache itself noted (an entry it
// refused: a symlink, an entry stored under another key; a write that
// failed once per kind) to the import's warnings, as the generator's
// cache does with its Warnings: otherwise a cache that never hits would
// cost a pahole run on every import without a word.
func (dc dwarfCache) forwardWarnings() {
	if dc.c == nil {
		return
	}
	for _, w := range dc.c.Warnings() {
		dc.opts.warn(fmt.Errorf("cache: %s: %s", dc.source, w))
	}
}

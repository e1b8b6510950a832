package generator

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	rtdebug "runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"

	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/safetext"
)

// kernelCache is the cache as one Generate run uses it. Per kernel, two
// kinds of entries, both keyed through kernelDigest, which hashes the
// tool, the kernel file's and module files' names and contents and the
// key the path gives:
//
//   - the kernel's BTF as read and validated (vmlinux and modules, zstd
//     compressed), so a kernel is not decompressed from xz again; not for
//     a kernel stored as raw BTF without modules, which reads faster than
//     a cached copy;
//   - the kernel's result for a set of relocation groups (relocationSet):
//     minimized and distilled blobs, and what the matching and
//     cilium/ebpf computed per group against the full BTF, stored only
//     once the oracle accepted it, so a kernel whose result is cached is
//     not even read.
//
// and per payload, the encoded payload, keyed by its entries.
//
// A result holds nothing per object: the report rows of the current
// objects are rebuilt from the per-group outcomes, and their load
// predictions computed on every run against the cached minimized BTF,
// which the oracle proved gives every group the fixups of the full BTF,
// with the kernel type IDs of the full BTF put back. So an object whose
// groups are all known already hits.
type kernelCache struct {
	c      *cache.Cache
	tool   []byte              // digest of the running btfembed and its dependencies
	byArch map[string]*objects // the objects each kernel architecture pairs with, set once they are loaded
	loaded <-chan struct{}     // closed once byArch is set (or loading failed)

	sets sync.Map // *objects -> *relocationSet
	// digests maps a kernel's path to its digest: the whole-run key
	// lists the corpus before the run reads it.
	digests sync.Map

	// pending maps a kernel's path to its digest while it is processed,
	// for the result to be stored under; hits maps it to the result
	// rebuilt from the cache.
	pending, hits sync.Map

	// verify is Args.CacheVerify: every kernel is read from the corpus
	// and processed, and a result hit must give the same output
	// (checkHit).
	verify bool

	resultHits, btfHits atomic.Int64
}

// openCache opens args' cache, if any. The cache is an optimization: a
// cache that cannot be used is a warning, and the run goes on without it
// (nil).
func openCache(args *Args) (*kernelCache, []string) {
	if args.CacheDir == "" {
		return nil, nil
	}
	kc, err := openKernelCache(args.CacheDir, args.CacheVerify)
	if err != nil {
		return nil, []string{fmt.Sprintf("%v; running without the cache", err)}
	}
	return kc, nil
}

func openKernelCache(dir string, verify bool) (*kernelCache, error) {
	c, err := cache.Open(dir)
	if err != nil {
		return nil, err
	}
	tool, err := toolDigest(c)
	if err != nil {
		return nil, err
	}
	return &kernelCache{c: c, tool: tool[:], verify: verify}, nil
}

// warnings are the cache's problems, for Result.Warnings. kc may be nil.
func (kc *kernelCache) warnings() []string {
	if kc == nil {
		return nil
	}
	return kc.c.Warnings()
}

// set returns the relocation set of o.
func (kc *kernelCache) set(o *objects) (*relocationSet, error) {
	if v, ok := kc.sets.Load(o); ok {
		return v.(*relocationSet), nil
	}
	s, err := newRelocationSet(o)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	kc.sets.Store(o, s)
	return s, nil
}

// toolDigest identifies the code that computes cache entries. A released
// btfembed is identified by its build information: module versions and
// checksums of it and of every dependency, and the Go version. A
// development build (the main module, or a replaced one) by that and the
// contents of the executable, so a rebuilt btfembed does not read entries
// an older build wrote.
func toolDigest(c *cache.Cache) (cache.Key, error) {
	bi, ok := rtdebug.ReadBuildInfo()
	if !ok {
		return cache.Key{}, fmt.Errorf("cache: no build information in the executable")
	}
	parts := [][]byte{[]byte("btfembed tool"), []byte(bi.String())}
	if !released(bi) {
		exe, err := os.Executable()
		if err != nil {
			return cache.Key{}, fmt.Errorf("cache: %w", err)
		}
		d, err := c.FileDigest(exe)
		if err != nil {
			return cache.Key{}, fmt.Errorf("cache: %w", err)
		}
		parts = append(parts, d[:])
	}
	return cache.NewKey(parts...), nil
}

// released reports whether btfembed is a versioned, checksummed
// dependency of the running executable.
func released(bi *rtdebug.BuildInfo) bool {
	const self = "github.com/btfembed/btfembed"
	for _, m := range bi.Deps {
		if m.Path == self {
			return m.Replace == nil && m.Sum != "" && m.Version != "(devel)"
		}
	}
	return false
}

// kernelDigest hashes what a kernel's reading depends on.
func (kc *kernelCache) kernelDigest(e *corpus.Entry) (cache.Key, error) {
	if d, ok := kc.digests.Load(e.Path); ok {
		return d.(cache.Key), nil
	}
	parts := append([][]byte{kc.tool}, keyParts(e.Key)...)
	for _, f := range append([]string{e.Path}, e.Modules...) {
		d, err := kc.c.FileDigest(f)
		if err != nil {
			return cache.Key{}, err
		}
		parts = append(parts, []byte(filepath.Base(f)), d[:])
	}
	key := cache.NewKey(parts...)
	kc.digests.Store(e.Path, key)
	return key, nil
}

// keyParts are a kernel key's fields, as cache keys hash them.
func keyParts(k kernelkey.Key) [][]byte {
	return [][]byte{[]byte(k.Arch), []byte(k.Release), []byte(k.Distro), []byte(k.Version)}
}

func (kc *kernelCache) btfKey(kernel cache.Key) cache.Key {
	return cache.NewKey([]byte("btf"), kernel[:])
}

func (kc *kernelCache) resultKey(kernel cache.Key, set *relocationSet) cache.Key {
	return cache.NewKey([]byte("result"), kernel[:], set.digest)
}

// readEntry is corpus.Options.ReadEntry: a kernel whose result is cached
// is returned without its BTF (process takes the result from hits), one
// whose BTF is cached is read from there, others are read from the
// corpus and their BTF stored when every file read cleanly.
func (kc *kernelCache) readEntry(e *corpus.Entry) (*corpus.Kernel, []error) {
	kd, err := kc.kernelDigest(e)
	if err != nil {
		return e.Read() // which reports the unreadable file
	}
	// The path tells the architecture, so the objects, of most kernels;
	// the others (a kernel image named vmlinux) are read first.
	if kc.loaded != nil {
		<-kc.loaded
	}
	if o := kc.byArch[e.Key.Arch]; o != nil {
		if set, err := kc.set(o); err == nil {
			if data, ok := kc.c.Get(kc.resultKey(kd, set)); ok {
				kr, err := o.fromCache(data, set, e.Path)
				if err == nil && !sameKernel(kr.entry.Key, e.Key) {
					err = fmt.Errorf("the entry is kernel %s's", kr.entry.Key)
				}
				if err == nil {
					err = withinBudget(&kr.entry)
				}
				switch {
				case err != nil:
					kc.c.Warn("cache: result of %s (%s) not used: %v; recomputed", e.Key, e.Path, err)
				case kc.verify:
					// The kernel is processed, and the result must
					// equal the cached one (checkHit); its cached BTF
					// is no more trusted than the result: it is read
					// from the corpus.
					k, errs := e.Read()
					if k != nil && len(errs) == 0 {
						kc.hits.Store(e.Path, kr)
						kc.pending.Store(e.Path, kd)
					}
					return k, errs
				default:
					kc.hits.Store(e.Path, kr)
					return &corpus.Kernel{Key: kr.entry.Key, Path: e.Path}, nil
				}
			}
		}
	}
	if kc.verify {
		return kc.read(e, kd)
	}
	if data, ok := kc.c.Get(kc.btfKey(kd)); ok {
		if k, err := decodeKernel(data, e); err == nil {
			kc.pending.Store(e.Path, kd)
			kc.btfHits.Add(1)
			return k, nil
		}
	}
	return kc.read(e, kd)
}

// sameKernel reports whether a cached entry's key is the key the corpus
// path gives: the fields the path sets must match (reading completes
// the others for a kernel image named vmlinux).
func sameKernel(cached, path kernelkey.Key) bool {
	for _, f := range [][2]string{{cached.Arch, path.Arch}, {cached.Release, path.Release}, {cached.Distro, path.Distro}, {cached.Version, path.Version}} {
		if f[1] != "" && f[0] != f[1] {
			return false
		}
	}
	return true
}

// read reads a kernel from the corpus and caches its BTF.
func (kc *kernelCache) read(e *corpus.Entry, kd cache.Key) (*corpus.Kernel, []error) {
	k, errs := e.Read()
	if k != nil && len(errs) == 0 {
		if !storedRaw(k) {
			if data, err := encodeKernel(k, e); err == nil {
				kc.c.Put(kc.btfKey(kd), data)
			}
		}
		kc.pending.Store(e.Path, kd)
	}
	return k, errs
}

// storedRaw reports whether a kernel's files are its raw BTF, which reads
// faster than a cached copy decompresses: then only its result is cached.
func storedRaw(k *corpus.Kernel) bool {
	if len(k.Modules) > 0 {
		return false
	}
	st, err := os.Stat(k.Path)
	return err == nil && st.Size() == int64(len(k.VMLinux))
}

// hit returns the result readEntry rebuilt for k from the cache, or nil.
func (kc *kernelCache) hit(k *corpus.Kernel) *kernelResult {
	v, ok := kc.hits.LoadAndDelete(k.Path)
	if !ok {
		return nil
	}
	return v.(*kernelResult)
}

// checkHit is verify mode's check of a cached result: fresh is k's result
// computed from its BTF read from the corpus, and the cached one must
// give the same output, the entry embedded and the report's rows. The
// oracle on the cached blobs alone did not cover what the predictions
// and rows are made of (kernel facts, refused programs' reasons,
// relocation outcomes, sizes): issue 33's entry kept 6.1.0-47's genuine
// BTF and forged its bpf_func_id enum, which flipped 9 programs to fails.
// Checking each of those against the full BTF costs what computing them
// does (matching, the oracle, the prediction; minimization and
// distillation are a few percent of a kernel), so they are computed. A
// result that differs is replaced by fresh, with a warning.
func (kc *kernelCache) checkHit(o *objects, k *corpus.Kernel, cached, fresh *kernelResult) {
	if diff := resultDiff(cached, fresh); diff != "" {
		kc.c.Warn("cache: result of %s (%s) fails verification against the full BTF, recomputed: %s", k.Key, k.Path, diff)
		kc.store(o, k, fresh)
		return
	}
	kc.pending.Delete(k.Path) // the entry is right: not written again
	kc.resultHits.Add(1)
}

// resultDiff says where a cached result's output first differs from the
// one computed from the corpus, "" if nowhere. Strings from the cache
// are escaped: in verify mode, the cache is untrusted input.
func resultDiff(cached, fresh *kernelResult) string {
	c, f := &cached.entry, &fresh.entry
	switch {
	case c.Key != f.Key:
		return fmt.Sprintf("kernel %s, computed %s", c.Key, f.Key)
	case !bytes.Equal(c.VMLinux, f.VMLinux):
		return "minimized vmlinux BTF"
	case !slices.EqualFunc(c.Modules, f.Modules, func(a, b encode.Module) bool {
		return a.Name == b.Name && bytes.Equal(a.Base, b.Base) && bytes.Equal(a.Split, b.Split)
	}):
		return "module BTF"
	}
	cr, fr := &cached.report, &fresh.report
	switch {
	case cr.Types != fr.Types || cr.Bytes != fr.Bytes:
		return fmt.Sprintf("vmlinux BTF of %d types, %d bytes; computed %d, %d", cr.Types, cr.Bytes, fr.Types, fr.Bytes)
	case !slices.Equal(cr.Modules, fr.Modules):
		return "module sizes"
	case cr.Path != fr.Path || !slices.Equal(cr.Objects, fr.Objects):
		return "kernel path or objects"
	case cr.Fixups != fr.Fixups:
		return "fixups"
	case len(cr.Programs) != len(fr.Programs):
		return fmt.Sprintf("%d program rows, computed %d", len(cr.Programs), len(fr.Programs))
	case len(cr.Unresolved) != len(fr.Unresolved) || len(cr.KernelTypeIDs) != len(fr.KernelTypeIDs):
		return fmt.Sprintf("%d unresolved and %d kernel type ID relocation rows, computed %d and %d",
			len(cr.Unresolved), len(cr.KernelTypeIDs), len(fr.Unresolved), len(fr.KernelTypeIDs))
	}
	for i, p := range cr.Programs {
		if q := fr.Programs[i]; !sameProgram(p, q) {
			return fmt.Sprintf("program %s %s: %s, computed %s", safetext.Escape(p.Object), safetext.Escape(p.Program), verdictText(p), verdictText(q))
		}
	}
	for _, rows := range [][2][]RelocationReport{{cr.Unresolved, fr.Unresolved}, {cr.KernelTypeIDs, fr.KernelTypeIDs}} {
		for i, r := range rows[0] {
			if q := rows[1][i]; r != q {
				return fmt.Sprintf("relocation %s %s+%d: %s, computed %s", safetext.Escape(r.Object), safetext.Escape(r.Section), r.InsnOff,
					relocationText(r), relocationText(q))
			}
		}
	}
	return ""
}

// relocationText is a relocation row's status and reason, escaped.
func relocationText(r RelocationReport) string {
	if r.Reason == "" {
		return orDash(safetext.Escape(r.Status))
	}
	return safetext.Escape(r.Status + ": " + r.Reason)
}

// verdictText is a program row's verdict, reason kind and first reason,
// escaped.
func verdictText(p ProgramReport) string {
	if len(p.Reasons) == 0 {
		return safetext.Escape(p.Verdict)
	}
	return safetext.Escape(fmt.Sprintf("%s (%s: %s)", p.Verdict, p.Reason, p.Reasons[0]))
}

// store caches a verified result of a kernel readEntry read.
func (kc *kernelCache) store(o *objects, k *corpus.Kernel, kr *kernelResult) {
	v, ok := kc.pending.LoadAndDelete(k.Path)
	if !ok {
		return
	}
	set, err := kc.set(o)
	if err != nil {
		return
	}
	cr := &cachedResult{
		Key: k.Key, VMLinux: kr.entry.VMLinux, Types: kr.report.Types, Bytes: kr.report.Bytes,
		ModuleReports: kr.report.Modules,
	}
	for _, m := range kr.entry.Modules {
		cr.Modules = append(cr.Modules, cachedModule{Name: m.Name, Base: m.Base, Split: m.Split})
	}
	if !cr.fill(o, set, kr) {
		return
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(cr); err == nil {
		kc.c.Put(kc.resultKey(v.(cache.Key), set), b.Bytes())
	}
}

// cachedKernel is a kernel's BTF as stored. Modules are named by their
// index in the entry's module files, which the kernel digest covers.
type cachedKernel struct {
	Key     kernelkey.Key
	VMLinux []byte
	Modules []cachedModuleBTF
}

type cachedModuleBTF struct {
	Name string
	File int
	BTF  []byte
}

var (
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	})
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	})
)

func encodeKernel(k *corpus.Kernel, e *corpus.Entry) ([]byte, error) {
	ck := cachedKernel{Key: k.Key, VMLinux: k.VMLinux}
	for _, m := range k.Modules {
		i := slices.Index(e.Modules, m.Path)
		if i < 0 {
			return nil, fmt.Errorf("module %s not among the entry's files", m.Path)
		}
		ck.Modules = append(ck.Modules, cachedModuleBTF{Name: m.Name, File: i, BTF: m.BTF})
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&ck); err != nil {
		return nil, err
	}
	enc, err := zstdEncoder()
	if err != nil {
		return nil, err
	}
	return enc.EncodeAll(b.Bytes(), nil), nil
}

func decodeKernel(data []byte, e *corpus.Entry) (*corpus.Kernel, error) {
	dec, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	raw, err := dec.DecodeAll(data, nil)
	if err != nil {
		return nil, err
	}
	var ck cachedKernel
	if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&ck); err != nil {
		return nil, err
	}
	k := &corpus.Kernel{Key: ck.Key, Path: e.Path, VMLinux: ck.VMLinux}
	for _, m := range ck.Modules {
		if m.File < 0 || m.File >= len(e.Modules) {
			return nil, fmt.Errorf("cached module file %d of %d", m.File, len(e.Modules))
		}
		k.Modules = append(k.Modules, corpus.Module{Name: m.Name, Path: e.Modules[m.File], BTF: m.BTF})
	}
	return k, nil
}

// payloadKey hashes what a payload is encoded from: every entry's key,
// blobs and verdicts, in order, the objects and the families.
func (kc *kernelCache) payloadKey(in *encode.Payload) cache.Key {
	parts := [][]byte{[]byte("payload"), kc.tool}
	for _, e := range in.Entries {
		parts = append(parts, keyParts(e.Key)...)
		parts = append(parts, e.VMLinux)
		for _, m := range e.Modules {
			hasBase := []byte{0}
			if m.Base != nil {
				hasBase[0] = 1
			}
			parts = append(parts, []byte(m.Name), hasBase, m.Base, m.Split)
		}
		parts = append(parts, nil) // ends the entry's modules
		for _, p := range e.Unloadable {
			parts = append(parts, []byte(p.Object.Name), []byte(strings.Join(p.Object.Programs, "\x00")),
				[]byte(p.Program), []byte{byte(p.Verdict)}, []byte(p.Kind))
			for _, r := range p.Reasons {
				parts = append(parts, []byte(r))
			}
			parts = append(parts, nil) // ends the prediction's reasons
		}
		parts = append(parts, nil) // ends the entry's predictions
	}
	parts = append(parts, []byte("objects"))
	for _, o := range in.Objects {
		parts = append(parts, []byte(o.Name))
		for _, prog := range o.Programs {
			parts = append(parts, []byte(prog.Name), prog.Digest[:])
		}
		parts = append(parts, nil) // ends the object's programs
	}
	parts = append(parts, []byte("families"))
	for _, f := range in.Families {
		parts = append(parts, keyParts(f.Family.Key(0))...)
		for _, abi := range f.ABIs {
			parts = append(parts, binary.AppendUvarint(nil, abi))
		}
		parts = append(parts, nil) // ends the family's members
	}
	return cache.NewKey(parts...)
}

// payload returns the payload encoded from in before: encoding costs a
// rerun more than the rest of it (the best zstd level's tables). kc may
// be nil.
//
// In verify mode the payload is encoded again: a cached payload is bytes
// the oracle cannot check, and a forged one would be embedded as it is.
func (kc *kernelCache) payload(in *encode.Payload) ([]byte, bool) {
	if kc == nil || kc.verify {
		return nil, false
	}
	return kc.c.Get(kc.payloadKey(in))
}

func (kc *kernelCache) storePayload(in *encode.Payload, payload []byte) {
	if kc != nil {
		kc.c.Put(kc.payloadKey(in), payload)
	}
}

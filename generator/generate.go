package generator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/btfembed/btfembed/generator/corpus"
	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/relodigest"
	"github.com/btfembed/btfembed/runtime/kernelkey"
)

// Args configures Generate.
type Args struct {
	// Objects are the BPF ELF objects whose relocations must resolve. Each
	// is checked against, and embedded for, only the kernels it pairs with:
	// those of its bpf2go architecture (bpf_x86_bpfel.o: x86), or all of
	// its byte order for generic BPF (see pair.go).
	Objects []string
	// ObjectArches, where it names an object, narrows the kernel
	// architectures (any spelling kernelkey.NormalizeArch knows) the object
	// pairs with to these: the go:generate mode passes the architectures of
	// the GOARCHes a package embeds the object for. Naming one the object
	// cannot run on is an error.
	ObjectArches map[string][]string
	// Corpus are the roots to read kernels from (see package corpus).
	Corpus []string
	// Arch keeps only kernels of these architectures; empty keeps all.
	Arch []string
	// Kernels keeps only releases matching this path.Match pattern.
	Kernels string
	// Workers is how many kernels are processed at once; 0 means one per
	// CPU.
	Workers int
	// Strict turns a corpus entry that cannot be read into a failure of
	// the run instead of a skipped kernel.
	Strict bool
	// Progress receives progress while kernels are processed; nil for
	// none.
	Progress Progress
	// CacheDir is the directory of the cache that spares a rerun the
	// kernels it has seen (see internal/cache); "" runs without one. The
	// command takes it from $BTFEMBED_CACHE. A cache that cannot be
	// opened, read or written is a warning (Result.Warnings), never an
	// error.
	CacheDir string
	// CacheVerify is the mode for a cache restored across a trust
	// boundary (a CI cache another branch could have written): every
	// kernel is read from the corpus and processed as without the cache,
	// and a result the cache holds for it must give the same output
	// (embedded BTF, load predictions, report rows and sizes); one that
	// does not is replaced, with a warning. Neither a cached kernel BTF
	// nor a cached payload is used. So it costs what a run without the
	// cache costs (see docs/cache.md); the command sets it from
	// $BTFEMBED_CACHE_VERIFY.
	CacheVerify bool
	// Shard and Shards process only the kernels of one shard out of
	// Shards (by a hash of each kernel's key, so adding kernels moves no
	// other); Result.WritePart writes what Merge joins. Shards 0
	// processes the whole corpus.
	Shard, Shards int
}

// Result is the output of Generate.
type Result struct {
	Report *Report
	// Warnings are problems that did not stop the run, one line each
	// (an object without CO-RE relocations).
	Warnings []string

	entries []encode.Entry // sorted by key, as in the payload
	// digests are the relocation digests of every object's programs, by
	// the object as Report.Objects names it: what the payload records it
	// was generated for.
	digests map[string]map[string]relodigest.Digest
	payload []byte // encoded by the first call of Payload
	shard   shardInfo
	kc      *kernelCache // nil without a cache
}

// ErrNoKernels is returned when the corpus yields no usable kernel.
var ErrNoKernels = errors.New("no kernels")

// Generate processes every kernel of the corpus and returns the payload to
// embed and the report. A kernel whose minimized BTF fails verification
// fails the run; a corpus entry that cannot be read is reported and
// skipped, unless Args.Strict.
func Generate(ctx context.Context, args *Args) (*Result, error) {
	start := time.Now()
	if len(args.Objects) == 0 {
		return nil, errors.New("no BPF objects given")
	}
	if len(args.Corpus) == 0 {
		return nil, errors.New("no corpus given")
	}
	if err := args.check(); err != nil {
		return nil, err
	}
	// Pairing reads the objects' ELF headers only, so an identical rerun
	// takes the whole run from the cache without loading them; its
	// errors wait for loading's, which say more about a bad object.
	pairings, pairErr := pairAll(args.Objects, args.ObjectArches)
	var arches []string
	if pairErr == nil {
		arches, pairErr = kernelArches(pairings, args.Arch)
	}
	workers := args.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	progress := args.Progress
	if progress == nil {
		progress = noProgress{}
	}
	// The cache is an optimization: a cache that cannot be used is a
	// warning, and the run goes on without it.
	var (
		kc       *kernelCache
		warnings []string
		err      error
		runKey   cache.Key
		whole    bool
	)
	if args.CacheDir != "" {
		if kc, err = openKernelCache(args.CacheDir, args.CacheVerify); err != nil {
			warnings = append(warnings, fmt.Sprintf("%v; running without the cache", err))
			kc = nil
		}
	}
	if kc != nil && pairErr == nil {
		runKey, whole = kc.runKey(ctx, args, arches, workers)
		if res, objWarnings := kc.wholeRun(runKey, whole, args); res != nil {
			progress.Total(len(res.Report.Kernels))
			for _, k := range res.Report.Kernels {
				progress.Done(k.key(), nil)
			}
			res.kc = kc
			res.Report.CachedResults = len(res.Report.Kernels)
			res.Report.Duration = time.Since(start)
			res.Warnings = append(append(objWarnings, warnings...), kc.warnings()...)
			return res, nil
		}
	}

	if pairErr != nil {
		// Loading's errors say more about a bad object than pairing's.
		if _, err := loadObjects(args.Objects); err != nil {
			return nil, err
		}
		return nil, pairErr
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// The objects load while the corpus starts being read: loading a big
	// object takes as long as reading a few kernels (150 ms for the
	// 33,857-relocation test object), and both are serial work. Workers,
	// and the cache's reads, wait for them; an error loading them ends
	// the run with that error.
	var (
		all     *objects
		loadErr error
		byArch  map[string]*objects
		loaded  = make(chan struct{})
	)
	if kc != nil {
		kc.loaded = loaded
	}
	go func() {
		defer close(loaded)
		if all, loadErr = loadObjects(args.Objects); loadErr != nil {
			cancel(loadErr)
			return
		}
		byArch = all.byArch(pairings)
		if kc != nil {
			kc.byArch = byArch
		}
	}()

	jobs := make(chan *corpus.Kernel)
	var (
		mu      sync.Mutex
		results []*kernelResult
		skipped []Skipped
		wg      sync.WaitGroup
		share   = newSharer(true)
	)
	for range workers {
		wg.Go(func() {
			<-loaded
			if loadErr != nil {
				return
			}
			for k := range jobs {
				// The corpus filter (opts.Arch) keeps only kernels of
				// architectures some object pairs with.
				objs := byArch[k.Key.Arch]
				if objs == nil {
					k.Release()
					cancel(fmt.Errorf("kernel %s (%s): no object pairs with architecture %q", k.Key, k.Path, k.Key.Arch))
					progress.Done(k.Key.String(), nil)
					continue
				}
				kr, err := objs.processCached(kc, k)
				k.Release()
				if err != nil {
					cancel(fmt.Errorf("kernel %s (%s): %w", k.Key, k.Path, err))
					progress.Done(k.Key.String(), err)
					continue
				}
				mu.Lock()
				share.share(kr)
				results = append(results, kr)
				mu.Unlock()
				progress.Done(k.Key.String(), nil)
			}
		})
	}

	removed := filterCount{}
	opts := &corpus.Options{
		Workers: workers, Strict: args.Strict, Arch: arches, Release: args.Kernels,
		Found: progress.Total, Filtered: removed.add, Shard: args.Shard, Shards: args.Shards,
		FullSpecs: true, // the oracle's reference: see fullTargets
		Hold:      true, // the workers release each kernel they are done with
	}
	if kc != nil {
		opts.ReadEntry = kc.readEntry
	}
	var readErr error
	for k, err := range corpus.Read(ctx, args.Corpus, opts) {
		if err != nil {
			var ke *corpus.KernelError
			if errors.As(err, &ke) && !args.Strict {
				skipped = append(skipped, Skipped{Path: ke.Path, Error: ke.Err.Error()})
				progress.Skipped(ke.Path, ke.Err)
				continue
			}
			readErr = err
			break
		}
		select {
		case jobs <- k:
		case <-ctx.Done():
			k.Release()
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait() // every worker waited for the objects first
	if loadErr != nil {
		return nil, loadErr
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if readErr != nil {
		return nil, readErr
	}
	if len(results) == 0 && args.Shards <= 1 {
		return nil, noKernels(args, arches, removed, len(skipped))
	}
	digests := map[string]map[string]relodigest.Digest{}
	for i, name := range all.names {
		digests[name] = all.digests[i]
	}
	res, err := assemble(args.Objects, digests, results, skipped, kc)
	if err != nil {
		return nil, err
	}
	res.shard = shardInfo{Shard: args.Shard, Shards: max(args.Shards, 1)}
	if kc != nil {
		res.Report.CachedResults = int(kc.resultHits.Load())
		res.Report.CachedBTF = int(kc.btfHits.Load())
	}
	if whole {
		kc.storeRun(runKey, res, objectWarnings(all))
	}
	res.Report.Duration = time.Since(start)
	res.Warnings = append(append(objectWarnings(all), warnings...), kc.warnings()...)
	return res, nil
}

// assemble sorts the kernels' results, refuses a kernel found twice, and
// encodes the payload and the report; Generate and Merge share it, so a
// merge of shards gives the bytes one run gives. digests are the objects'
// programs' relocation digests, by object.
func assemble(objects []string, digests map[string]map[string]relodigest.Digest, results []*kernelResult, skipped []Skipped, kc *kernelCache) (*Result, error) {
	slices.SortFunc(results, func(a, b *kernelResult) int { return a.entry.Key.Compare(b.entry.Key) })
	for i := 1; i < len(results); i++ {
		if results[i].entry.Key == results[i-1].entry.Key {
			return nil, fmt.Errorf("kernel %s found twice: %s and %s",
				results[i].entry.Key, results[i-1].report.Path, results[i].report.Path)
		}
	}
	// Skipped entries come from the corpus stream in an order that
	// depends on which kernels share the run; sorted, they do not.
	slices.SortStableFunc(skipped, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	entries := make([]encode.Entry, len(results))
	report := &Report{Objects: objects, Skipped: skipped}
	for i, r := range results {
		entries[i] = r.entry
		report.Kernels = append(report.Kernels, r.report)
	}
	return newResult(entries, report, digests, kc), nil
}

// newResult is the result of entries, whose payload is not encoded yet,
// and completes the report's families and blob count.
func newResult(entries []encode.Entry, report *Report, digests map[string]map[string]relodigest.Digest, kc *kernelCache) *Result {
	withVerdicts(entries, report)
	report.Families = families(report.Kernels)
	// Keyed by digest, as sharer.blob: a string key would copy every
	// distinct blob.
	blobs := map[[sha256.Size]byte]bool{}
	for _, e := range entries {
		blobs[sha256.Sum256(e.VMLinux)] = true
	}
	report.Blobs = len(blobs)
	return &Result{Report: report, entries: entries, digests: digests, kc: kc}
}

// Payload is the embedded format (package internal/payload) holding every
// kernel's entry, encoded on the first call, which sets
// Report.PayloadBytes. The go:generate mode writes a payload per
// architecture instead (ForArch), so Generate leaves encoding to the
// caller that writes one.
func (r *Result) Payload() ([]byte, error) {
	if r.payload != nil {
		return r.payload, nil
	}
	contents := r.contents()
	if data, ok := r.kc.payload(contents); ok {
		r.payload = data
	} else {
		var b bytes.Buffer
		if err := encode.Write(&b, contents, nil); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		r.payload = b.Bytes()
		r.kc.storePayload(contents, r.payload)
	}
	r.Report.PayloadBytes = len(r.payload)
	return r.payload, nil
}

// ForArch is the part of the result for the kernels of one architecture
// (any spelling kernelkey.NormalizeArch knows): what a binary built for
// that architecture embeds. With no such kernel, its payload holds none,
// and the runtime then serves only kernels with BTF of their own.
func (r *Result) ForArch(arch string) *Result {
	if a, ok := kernelkey.NormalizeArch(arch); ok {
		arch = a
	}
	report := &Report{Duration: r.Report.Duration}
	var entries []encode.Entry
	for i, e := range r.entries {
		if e.Key.Arch != arch {
			continue
		}
		entries = append(entries, e)
		k := r.Report.Kernels[i]
		report.Kernels = append(report.Kernels, k)
		for _, o := range k.Objects {
			if !slices.Contains(report.Objects, o) {
				report.Objects = append(report.Objects, o)
			}
		}
	}
	slices.SortFunc(report.Objects, func(a, b string) int {
		return slices.Index(r.Report.Objects, a) - slices.Index(r.Report.Objects, b)
	})
	return newResult(entries, report, r.digests, r.kc)
}

// contents is what the payload holds: the entries, the objects of the
// report with their programs' relocation digests, named as the verdicts
// name them, and the stable families.
func (r *Result) contents() *encode.Payload {
	p := &encode.Payload{Entries: r.entries}
	names := objectNames(r.Report.Objects)
	for _, o := range r.Report.Objects {
		rec := payload.ObjectRecordDigests{Name: names[o]}
		for _, prog := range slices.Sorted(maps.Keys(r.digests[o])) {
			rec.Programs = append(rec.Programs, payload.ProgramDigest{Name: prog, Digest: r.digests[o][prog]})
		}
		if len(rec.Programs) > 0 { // an object without programs: nothing to check
			p.Objects = append(p.Objects, rec)
		}
	}
	for _, f := range r.Report.Families {
		if f.Stable {
			p.Families = append(p.Families, payload.FamilyRecord{Family: f.family, ABIs: f.abis})
		}
	}
	return p
}

// Progress is told how many corpus entries there are, then about each as
// the run goes.
type Progress interface {
	Total(entries int)
	Done(kernel string, err error)
	Skipped(path string, err error)
}

type noProgress struct{}

func (noProgress) Total(int)             {}
func (noProgress) Done(string, error)    {}
func (noProgress) Skipped(string, error) {}

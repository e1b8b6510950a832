package generator

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/corpus"
)

// Args configures Generate.
type Args struct {
	// Objects are the BPF ELF objects whose relocations must resolve. Each
	// is checked against, and embedded for, only the kernels it pairs with:
	// those of its bpf2go architecture (bpf_x86_bpfel.o: x86), or all of
	// its byte order for generic BPF (see pair.go).
	Objects []string
	// ObjectArches, where it names an object, narrows the kernel
	// architectures (x86_64, arm64, ... in any spelling of uname -m, GOARCH
	// or a distribution) the object pairs with to these: the go:generate
	// mode passes the architectures of the GOARCHes a package embeds the
	// object for. Naming one the object cannot run on is an error.
	ObjectArches map[string][]string
	// Corpus are the roots to read kernels from, in the layout package
	// corpus's Import writes (docs/corpus.md).
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

// errNoKernels is returned when the corpus yields no usable kernel.
var errNoKernels = errors.New("no kernels")

// Generate processes every kernel of the corpus and returns the payload to
// embed and the report. A kernel whose minimized BTF fails verification
// fails the run; a corpus entry that cannot be read is reported and
// skipped, unless Args.Strict.
func Generate(ctx context.Context, args *Args) (*Result, error) {
	start := time.Now()
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
	kc, warnings := openCache(args)
	var (
		runKey cache.Key
		whole  bool
	)
	if kc != nil && pairErr == nil {
		runKey, whole = kc.runKey(ctx, args, arches, workers)
		if res, objWarnings := kc.wholeRun(runKey, whole, args, progress); res != nil {
			res.Report.Duration = time.Since(start)
			res.Warnings = append(objWarnings, kc.warnings()...)
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

	all, results, skipped, err := processCorpus(ctx, args, pairings, arches, workers, progress, kc)
	if err != nil {
		return nil, err
	}
	res, err := assemble(args.Objects, all.digestsByName(), results, skipped, kc)
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

// processCorpus is the per-kernel stage, its three parts running at once:
// the objects load (objectLoad), workers process kernels (kernelWorkers)
// and the corpus stream feeds them (streamCorpus). The first error ends
// it: the objects', a kernel's, then the stream's. It returns the
// objects and the kernels' results, in the order they were done.
func processCorpus(ctx context.Context, args *Args, pairings []pairing, arches []string, workers int, progress Progress, kc *kernelCache) (*objects, []*kernelResult, []Skipped, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	objs := startObjectLoad(args.Objects, pairings, kc, cancel)
	jobs := make(chan *corpus.Kernel)
	w := startWorkers(workers, jobs, objs, kc, progress, cancel)
	skipped, removed, readErr := streamCorpus(ctx, args, arches, workers, progress, kc, jobs)
	results := w.wait() // every worker waited for the objects first
	if err := objs.wait(); err != nil {
		return nil, nil, nil, err
	}
	if err := context.Cause(ctx); err != nil {
		return nil, nil, nil, err
	}
	if readErr != nil {
		return nil, nil, nil, readErr
	}
	if len(results) == 0 && args.Shards <= 1 {
		return nil, nil, nil, noKernels(args, arches, removed, len(skipped))
	}
	return objs.all, results, skipped, nil
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

package generator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/corpus"
)

// errNotWhole stops the listing of a run whose key cannot be told
// without reading some kernel: its result is not looked up whole.
var errNotWhole = errors.New("not a whole-run candidate")

// runKey is the cache key of a whole run's result: btfembed's build, the
// arguments that shape the output, every object's name and bytes, and
// every corpus entry the run reads, by path and by the digest of its
// files (the same digest as its per-kernel entries, through the stat
// index, kept for the run's reading of the corpus on a miss). An identical rerun, the
// usual go:generate that changed nothing, finds the whole result under
// it and skips the per-kernel work: pairing results with the objects'
// relocation groups, rebuilding report rows and predicting every
// program against each kernel's minimized BTF, which cost a rerun 3.5-8
// ms of CPU per kernel.
//
// ok is false when some entry cannot be keyed without reading it (its
// path does not tell its release, a file cannot be read), or the run is
// one shard (its part is its output): the run is then made kernel by
// kernel, as without the whole-run entry.
func (kc *kernelCache) runKey(ctx context.Context, args *Args, arches []string, workers int) (_ cache.Key, ok bool) {
	if kc.verify || args.Shards > 1 {
		return cache.Key{}, false
	}
	flags, err := json.Marshal(struct {
		Objects      []string
		ObjectArches map[string][]string
		Corpus, Arch []string
		Kernels      string
		Strict       bool
	}{args.Objects, args.ObjectArches, args.Corpus, arches, args.Kernels, args.Strict})
	if err != nil {
		return cache.Key{}, false
	}
	parts := [][]byte{[]byte("run"), kc.tool, flags}
	for _, o := range args.Objects {
		d, err := kc.c.FileDigest(o)
		if err != nil {
			return cache.Key{}, false
		}
		parts = append(parts, d[:])
	}
	listed := func(e *corpus.Entry) (*corpus.Kernel, []error) {
		if e.Key.Release == "" || e.Key.Arch == "" {
			return nil, []error{errNotWhole}
		}
		kd, err := kc.kernelDigest(e)
		if err != nil {
			return nil, []error{errNotWhole}
		}
		return &corpus.Kernel{Key: e.Key, Path: e.Path, VMLinux: kd[:]}, nil
	}
	opts := &corpus.Options{Workers: workers, Strict: true, Arch: arches, Release: args.Kernels, ReadEntry: listed}
	for k, err := range corpus.Read(ctx, args.Corpus, opts) {
		if err != nil {
			return cache.Key{}, false
		}
		parts = append(parts, []byte(k.Path), k.VMLinux)
	}
	return cache.NewKey(parts...), true
}

// wholeRun returns the cached result of the run keyed key, its kernels
// told to progress as done, and the objects' warnings it was made with;
// nil if the run is not whole (see runKey), there is none, or it cannot
// be used (a warning then says why). It goes through Merge, which checks
// every kernel of it as it checks a shard's part, so a damaged entry is a
// miss rather than a wrong payload.
func (kc *kernelCache) wholeRun(key cache.Key, whole bool, args *Args, progress Progress) (*Result, []string) {
	if !whole {
		return nil, nil
	}
	data, ok := kc.c.Get(key)
	if !ok {
		return nil, nil
	}
	res, meta, err := Merge([]Part{{Name: "cached run " + key.String(), Data: data}})
	var warnings []string
	if err == nil {
		err = json.Unmarshal(meta, &warnings)
	}
	if err == nil && !slices.Equal(res.Report.Objects, args.Objects) {
		err = errors.New("its objects differ")
	}
	if err != nil {
		kc.c.Warn("cache: whole-run result not used: %v; recomputed", err)
		return nil, nil
	}
	progress.Total(len(res.Report.Kernels))
	for _, k := range res.Report.Kernels {
		progress.Done(k.key(), nil)
	}
	res.kc = kc
	res.Report.CachedResults = len(res.Report.Kernels)
	return res, warnings
}

// storeRun keeps res, a whole run's verified result, under key, with the
// objects' warnings, which a rerun gives without loading the objects.
func (kc *kernelCache) storeRun(key cache.Key, res *Result, warnings []string) {
	meta, err := json.Marshal(warnings)
	var b bytes.Buffer
	if err == nil {
		err = res.WritePart(&b, meta)
	}
	if err == nil {
		err = kc.c.Put(key, b.Bytes())
	}
	if err != nil {
		kc.c.Warn("cache: whole-run result not stored: %v", err)
	}
}

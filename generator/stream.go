package generator

import (
	"context"
	"errors"

	"github.com/btfembed/btfembed/internal/corpus"
)

// streamCorpus reads the kernels of args' corpus (of the architectures
// arches, and args' releases and shard) with workers readers, and sends
// each to jobs, which it closes when done; it stops when ctx is done.
// An entry that cannot be read is skipped, and told to progress, unless
// args.Strict; any other error ends the stream, and is returned. removed
// counts the entries each filter removed, for noKernels.
func streamCorpus(ctx context.Context, args *Args, arches []string, workers int, progress Progress, kc *kernelCache, jobs chan<- *corpus.Kernel) (skipped []Skipped, removed filterCount, err error) {
	defer close(jobs)
	removed = filterCount{}
	opts := &corpus.Options{
		Workers: workers, Strict: args.Strict, Arch: arches, Release: args.Kernels,
		Found: progress.Total, Filtered: removed.add, Shard: args.Shard, Shards: args.Shards,
		FullSpecs: true, // the oracle's reference: see fullTargets
		Hold:      true, // the workers release each kernel they are done with
	}
	if kc != nil {
		opts.ReadEntry = kc.readEntry
	}
	for k, err := range corpus.Read(ctx, args.Corpus, opts) {
		if err != nil {
			var ke *corpus.KernelError
			if errors.As(err, &ke) && !args.Strict {
				skipped = append(skipped, Skipped{Path: ke.Path, Error: ke.Err.Error()})
				progress.Skipped(ke.Path, ke.Err)
				continue
			}
			return skipped, removed, err
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
	return skipped, removed, nil
}

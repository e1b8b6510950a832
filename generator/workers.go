package generator

import (
	"context"
	"fmt"
	"sync"

	"github.com/btfembed/btfembed/internal/corpus"
)

// kernelWorkers process the kernels the corpus stream sends them, each
// against the objects of its architecture, from the cache where it can
// (processCached). A kernel that fails cancels the run with its error.
type kernelWorkers struct {
	objs     *objectLoad
	kc       *kernelCache // nil without a cache
	progress Progress
	cancel   context.CancelCauseFunc
	wg       sync.WaitGroup

	mu      sync.Mutex
	results []*kernelResult
	share   *sharer // the results' report rows, shared across kernels
}

// startWorkers starts n workers on jobs; they wait for the objects first.
func startWorkers(n int, jobs <-chan *corpus.Kernel, objs *objectLoad, kc *kernelCache, progress Progress, cancel context.CancelCauseFunc) *kernelWorkers {
	w := &kernelWorkers{objs: objs, kc: kc, progress: progress, cancel: cancel, share: newSharer(true)}
	for range n {
		w.wg.Go(func() {
			if objs.wait() != nil {
				return
			}
			for k := range jobs {
				w.process(k)
			}
		})
	}
	return w
}

// process processes one kernel, then releases it to the corpus reader.
func (w *kernelWorkers) process(k *corpus.Kernel) {
	// The corpus filter (corpus.Options.Arch) keeps only kernels of
	// architectures some object pairs with.
	objs := w.objs.byArch[k.Key.Arch]
	if objs == nil {
		k.Release()
		w.cancel(fmt.Errorf("kernel %s (%s): no object pairs with architecture %q", k.Key, k.Path, k.Key.Arch))
		w.progress.Done(k.Key.String(), nil)
		return
	}
	kr, err := objs.processCached(w.kc, k)
	k.Release()
	if err != nil {
		w.cancel(fmt.Errorf("kernel %s (%s): %w", k.Key, k.Path, err))
		w.progress.Done(k.Key.String(), err)
		return
	}
	w.mu.Lock()
	w.share.share(kr)
	w.results = append(w.results, kr)
	w.mu.Unlock()
	w.progress.Done(k.Key.String(), nil)
}

// wait waits for the workers to finish, once their jobs are closed, and
// returns their results.
func (w *kernelWorkers) wait() []*kernelResult {
	w.wg.Wait()
	return w.results
}

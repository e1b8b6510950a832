package generator

import "context"

// objectLoad is the objects loading while the corpus starts being read:
// loading a big object takes as long as reading a few kernels (150 ms for
// the 33,857-relocation test object), and both are serial work. Workers,
// and the cache's reads, wait for it; an error loading the objects
// cancels the run with that error.
type objectLoad struct {
	done chan struct{} // closed once the fields below are set
	all  *objects
	// byArch are the objects each kernel architecture pairs with.
	byArch map[string]*objects
	err    error
}

// startObjectLoad loads the objects at paths in the background, and
// pairs them with kernel architectures as pairings say. The cache's
// reads, which pair kernels with objects too, are given them as well.
func startObjectLoad(paths []string, pairings []pairing, kc *kernelCache, cancel context.CancelCauseFunc) *objectLoad {
	l := &objectLoad{done: make(chan struct{})}
	if kc != nil {
		kc.loaded = l.done
	}
	go func() {
		defer close(l.done)
		if l.all, l.err = loadObjects(paths); l.err != nil {
			cancel(l.err)
			return
		}
		l.byArch = l.all.byArch(pairings)
		if kc != nil {
			kc.byArch = l.byArch
		}
	}()
	return l
}

// wait waits for the objects, and returns the error loading them.
func (l *objectLoad) wait() error {
	<-l.done
	return l.err
}

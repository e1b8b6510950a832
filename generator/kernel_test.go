package generator

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestResultHoldsNoKernel: the generator keeps every kernel's result until
// the payload is written, so a result that kept its kernel's BTF reachable
// kept the whole corpus, 4.5 MB a kernel (as the cache-only relocation
// outcomes did with the cache off). Once processed, the kernel's raw BTF
// must be collectable while its result lives.
func TestResultHoldsNoKernel(t *testing.T) {
	objs, err := loadObjects(testObjects(t))
	if err != nil {
		t.Fatal(err)
	}
	k := kerneltest.ByName(t, "6.1.0-47-amd64")
	raw := bytes.Clone(k.BTF)
	freed := watchCollection(&raw[0])
	kr, err := objs.processCached(nil, &corpus.Kernel{Key: kernelkey.Key{Arch: k.Arch, Release: k.Release}, VMLinux: raw})
	if err != nil {
		t.Fatal(err)
	}
	raw = nil
	ok := collectedWithin(freed, 20)
	runtime.KeepAlive(kr)
	if !ok {
		t.Fatal("the kernel's raw BTF is still reachable from its result")
	}
}

// watchCollection returns a channel closed once the object at p has been
// collected.
func watchCollection[T any](p *T) <-chan struct{} {
	freed := make(chan struct{})
	runtime.AddCleanup(p, func(ch chan struct{}) { close(ch) }, freed)
	return freed
}

// collectedWithin forces up to n collections, and reports whether freed
// was closed by then.
func collectedWithin(freed <-chan struct{}, n int) bool {
	for range n {
		runtime.GC()
		select {
		case <-freed:
			return true
		case <-time.After(10 * time.Millisecond):
		}
	}
	return false
}

package generator

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/btfembed/btfembed/generator/corpus"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/runtime/kernelkey"
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
	collected := make(chan struct{})
	runtime.AddCleanup(&raw[0], func(ch chan struct{}) { close(ch) }, collected)
	kr, err := objs.processCached(nil, &corpus.Kernel{Key: kernelkey.Key{Arch: k.Arch, Release: k.Release}, VMLinux: raw})
	if err != nil {
		t.Fatal(err)
	}
	raw = nil
	for range 20 {
		runtime.GC()
		select {
		case <-collected:
			runtime.KeepAlive(kr)
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	runtime.KeepAlive(kr)
	t.Fatal("the kernel's raw BTF is still reachable from its result")
}

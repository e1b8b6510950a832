package rawbtf

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestParseShared checks that Parse and ParseShared get back the Spec
// ParseShared made of the same slice while it lives, and only then: not for a copy of the
// bytes, not for a shorter slice of them, not over a base, and not once
// the Spec was collected.
func TestParseShared(t *testing.T) {
	raw := slices.Clone(kerneltest.Corpus(t)[0].BTF)
	first, err := ParseShared(raw)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Parse(raw, nil); err != nil || again != first {
		t.Fatalf("Parse of the shared slice: %p, %v; want %p", again, err, first)
	}
	if again, err := ParseShared(raw); err != nil || again != first {
		t.Fatalf("ParseShared of the shared slice: %p, %v; want %p", again, err, first)
	}
	if other, err := Parse(slices.Clone(raw), nil); err != nil || other == first {
		t.Fatalf("Parse of a copy: %p, %v; want a Spec of its own", other, err)
	}
	if _, err := Parse(raw[:len(raw)-1], nil); err == nil {
		t.Fatal("Parse of a truncated slice succeeded: it was answered from the shared Spec")
	}
	if split, err := Parse(raw, first); err == nil && split == first {
		t.Fatal("Parse over a base returned the shared standalone Spec")
	}

	runtime.KeepAlive(first)
	first = nil
	// Cleanups run on their own goroutine after a collection: wait for
	// the entry to go, up to a few seconds.
	for i := 0; ; i++ {
		runtime.GC()
		if _, ok := shared.Load(keyOf(raw)); !ok {
			break
		}
		if i == 100 {
			t.Fatal("the entry of an unreachable Spec is still there after 100 collections")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

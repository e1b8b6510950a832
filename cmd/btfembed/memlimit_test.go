package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestDeferCollection: the collector is off and the limit set until the
// first collection, then both are back to the defaults.
func TestDeferCollection(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("$GOGC or $GOMEMLIMIT set: deferCollection leaves them")
	}
	t.Cleanup(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
	const limit = 1 << 40
	deferCollection(limit)
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("memory limit %d, want %d", got, limit)
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC %d, want off", got)
	}
	// The cleanup runs in its own goroutine after a collection.
	for deadline := time.Now().Add(10 * time.Second); debug.SetMemoryLimit(-1) == limit; {
		if time.Now().After(deadline) {
			t.Fatal("defaults not restored after collections")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d after the first collection, want none", got)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d after the first collection, want 100", got)
	}
}

package encode_test

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// encoderBytes is about what one encoder with a dictionary holds: its
// tables, their state for the dictionary, and the window (see encoder.go).
const encoderBytes = 76 << 20

// TestEncodeOneEncoderAtATime encodes a payload that takes several
// dictionaries, the later ones tried against the earlier (so it makes an
// encoder per dictionary, per tried base and for the plain frames), and
// watches the heap meanwhile: it must never hold two encoders' worth
// above what it held before, as it did when an encoder outlived its use.
func TestEncodeOneEncoderAtATime(t *testing.T) {
	entries := multiDictEntries(t)
	opts := &encode.Options{MaxDictSize: 1}
	payloadtest.Encode(t, entries, opts) // load whatever Write loads once

	grew := peakHeapGrowth(func() { payloadtest.Encode(t, entries, opts) })
	if grew > encoderBytes*3/2 {
		t.Errorf("the heap grew by %d MiB while encoding; one encoder is about %d MiB", grew>>20, encoderBytes>>20)
		return
	}
	t.Logf("the heap grew by at most %d MiB while encoding", grew>>20)
}

// peakHeapGrowth runs f and returns by how much the heap (live objects
// and garbage not yet collected) grew over what it was before, at most,
// sampled every 50 µs.
func peakHeapGrowth(f func()) int64 {
	runtime.GC()
	before := heapObjects()
	peak := make(chan uint64)
	stop := make(chan struct{})
	go func() {
		var most uint64
		for {
			select {
			case <-stop:
				peak <- most
				return
			default:
			}
			most = max(most, heapObjects())
			time.Sleep(50 * time.Microsecond)
		}
	}()
	f()
	close(stop)
	return int64(<-peak) - int64(before)
}

// heapObjects is the bytes of heap objects, live or not yet collected.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

package encode_test

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// encoderBytes is about what one Write holds beyond its output: the
// DEFLATE compressor's hash chains and window (about 1 MiB) and the
// streams being built. 1.5 MiB measured; a compressor per stream, kept
// until the end, took 11 MiB on this test's payload.
const encoderBytes = 2 << 20

// TestEncodeOneEncoderAtATime encodes a payload that takes several
// dictionaries, the later ones tried against the earlier (so it compresses
// against each dictionary, each tried base and none), and watches the heap
// meanwhile: it must never hold much more than one compressor's worth
// above what it held before, as it would if a compressor were made per
// dictionary and outlived its use.
func TestEncodeOneEncoderAtATime(t *testing.T) {
	entries := multiDictEntries(t)
	opts := &encode.Options{MaxDictSize: 1}
	payloadtest.Encode(t, entries, opts) // load whatever Write loads once

	grew := peakHeapGrowth(func() { payloadtest.Encode(t, entries, opts) })
	if grew > encoderBytes*3/2 {
		t.Errorf("the heap grew by %d KiB while encoding; one encoder is about %d KiB", grew>>10, encoderBytes>>10)
		return
	}
	t.Logf("the heap grew by at most %d KiB while encoding", grew>>10)
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

package generator

import (
	"crypto/sha256"
	"errors"
	"flag"
	"testing"
)

// FuzzMerge feeds mutated parts to Merge, the SHA-256 trailer recomputed
// so that mutations reach the decoder: a part comes from another machine
// of a CI matrix. Any error must wrap ErrPart or errNoKernels; a panic
// fails. The seeds are testdata/fuzz/FuzzMerge (parts of one kernel and
// of the testdata run, and issue 33's: a verdict outside the report's
// words, reasons holding escape sequences, empty rows that decode to 50
// times their size) and, outside fuzzing, a part made now, in the
// current format: making it in every fuzzing worker, instrumented,
// stalled the fuzzer.
func FuzzMerge(f *testing.F) {
	if !fuzzing() {
		f.Add(shardParts(f, testObjects(f), 1)[0].Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= sha256.Size {
			sum := sha256.Sum256(data[:len(data)-sha256.Size])
			copy(data[len(data)-sha256.Size:], sum[:])
		}
		_, _, err := Merge([]Part{{Name: "fuzzed", Data: data}})
		if err != nil && !errors.Is(err, ErrPart) && !errors.Is(err, errNoKernels) {
			t.Fatalf("error %v wraps neither ErrPart nor errNoKernels", err)
		}
	})
}

// fuzzing says the test binary fuzzes: the coordinator has -test.fuzz,
// its workers -test.fuzzworker.
func fuzzing() bool {
	fz, worker := flag.Lookup("test.fuzz"), flag.Lookup("test.fuzzworker")
	return fz != nil && fz.Value.String() != "" || worker != nil && worker.Value.String() == "true"
}

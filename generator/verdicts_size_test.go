package generator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
)

// TestVerdictBytes measures what embedding the load verdicts costs: the
// payload of a run, and the same entries encoded without their verdicts.
// The corpus is testdata's, or $BTFEMBED_VERDICT_CORPUS (a corpus of
// internal/cmd/benchcorpus, for the figure at scale); the objects are the
// 14 little-endian objects of scripts/bench-cache.sh. docs/runtime.md
// quotes the figures.
func TestVerdictBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("generates for 14 objects")
	}
	repo := filepath.Join(kerneltest.Dir(), "..")
	var objects []string
	for _, pattern := range []string{"testdata/objects/*-el.o", "internal/coremin/testdata/*-el.o", "examples/execsnoop/bpf_*_bpfel.o"} {
		m, err := filepath.Glob(filepath.Join(repo, pattern))
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, m...)
	}
	corpusDir := testCorpus()
	if dir := os.Getenv("BTFEMBED_VERDICT_CORPUS"); dir != "" {
		corpusDir = []string{dir}
	}
	res, err := Generate(context.Background(), &Args{Objects: objects, Corpus: corpusDir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	bare := slices.Clone(res.entries)
	withRows := 0
	for i := range bare {
		if len(bare[i].Unloadable) > 0 {
			withRows++
		}
		bare[i].Unloadable = nil
	}
	var without bytes.Buffer
	if err := encode.Write(&without, &encode.Payload{Entries: bare}, nil); err != nil {
		t.Fatal(err)
	}
	p, err := payload.Open(payloadOf(t, res))
	if err != nil {
		t.Fatal(err)
	}
	stored, raw := p.VerdictsSize()
	added := len(payloadOf(t, res)) - without.Len()
	t.Logf("%d kernels, %d objects, %d kernels with programs that do not load or may not: payload %d bytes, %d without verdicts: verdicts add %d bytes (%.1f per kernel), of which the verdicts frame is %d (%d decompressed)",
		len(bare), len(objects), withRows, len(payloadOf(t, res)), without.Len(), added, float64(added)/float64(len(bare)), stored, raw)
	if withRows == 0 || added <= 0 || stored == 0 || uint64(added) < stored {
		t.Errorf("verdicts of %d kernels add %d bytes, frame %d", withRows, added, stored)
	}
}

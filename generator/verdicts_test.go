package generator

import (
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/vocab"
)

// TestGenerateEmbedsVerdicts reads the verdicts back from the payload of
// the testdata run: per kernel, exactly the programs the report says do
// not load or may not, under the objects' base names, with the report's
// reasons; guards-el.o's field_unguarded fails on the 6.1 kernels only,
// and kernels with the same verdicts share one set.
func TestGenerateEmbedsVerdicts(t *testing.T) {
	res := generated(t)
	p, err := payload.Open(payloadOf(t, res))
	if err != nil {
		t.Fatal(err)
	}
	sets := map[uint64]bool{}
	for i := range res.Report.Kernels {
		k := &res.Report.Kernels[i]
		e, ok, err := p.Find(kernelkey.Key{Arch: k.Arch, Release: k.Release, Distro: k.Distro, Version: k.Version}, nil)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", k.key(), ok, err)
		}
		sets[e.Verdicts] = true
		preds, err := p.Predictions(e, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]payload.Prediction{}
		for _, pr := range preds {
			got[pr.Object.Name+"/"+pr.Program] = pr
		}
		want := 0
		for _, pr := range k.Programs {
			if pr.Verdict == vocab.Loads.String() {
				continue
			}
			want++
			name := pr.Object[strings.LastIndex(pr.Object, "/")+1:] + "/" + pr.Program
			g, ok := got[name]
			if !ok {
				t.Errorf("%s: %s %s is not embedded", k.key(), name, pr.Verdict)
				continue
			}
			if g.Kind != pr.Reason || g.Kind == "" {
				t.Errorf("%s: %s: kind %q, reported %q", k.key(), name, g.Kind, pr.Reason)
			}
			if g.Verdict.String() != pr.Verdict || !slices.Equal(g.Reasons, pr.Reasons) {
				t.Errorf("%s: %s embedded as %s %q, reported %s %q", k.key(), name, g.Verdict, g.Reasons, pr.Verdict, pr.Reasons)
			}
		}
		if len(preds) != want {
			t.Errorf("%s: %d programs embedded, the report has %d", k.key(), len(preds), want)
		}
		_, unguarded := got["guards-el.o/field_unguarded"]
		if unguarded != strings.HasPrefix(k.Release, "6.1.") {
			t.Errorf("%s: field_unguarded embedded as failing: %v", k.key(), unguarded)
		}
	}
	if len(sets) >= len(res.Report.Kernels) {
		t.Errorf("%d kernels, %d verdict sets: none shared", len(res.Report.Kernels), len(sets))
	}
}

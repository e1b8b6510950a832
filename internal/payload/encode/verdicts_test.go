package encode_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// TestEncodeVerdicts writes the testdata kernels with verdicts and reads
// every entry's back: the same rows in object and program order, rows and
// sets stored once however many kernels share them.
func TestEncodeVerdicts(t *testing.T) {
	entries := payloadtest.WithVerdicts(payloadtest.Entries(t))
	p := open(t, payloadtest.Encode(t, entries, nil))
	withRows := 0
	for _, e := range entries {
		got, err := p.Predictions(entry(t, p, e.Key), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(e.Unloadable) {
			t.Fatalf("%s: %d predictions, want %d", e.Key, len(got), len(e.Unloadable))
		}
		if len(got) > 0 {
			withRows++
		}
		want := slices.SortedFunc(slices.Values(e.Unloadable), func(a, b encode.Prediction) int { return strings.Compare(a.Program, b.Program) })
		for i, want := range want {
			g := got[i]
			if g.Object.Name != want.Object.Name || !slices.Equal(g.Object.Programs, want.Object.Programs) ||
				g.Program != want.Program || g.Verdict != want.Verdict || g.Kind != want.Kind || !slices.Equal(g.Reasons, want.Reasons) {
				t.Errorf("%s: prediction %d is %s %q %+v, want %+v", e.Key, i, g.Object.Name, g.Object.Programs, g, want)
			}
		}
	}
	if withRows < 3 {
		t.Fatalf("only %d kernels with verdicts: the test data changed", withRows)
	}
	// Three 6.1 kernels, two verdict sets (x86_64's handle_fork, arm64's
	// handle_fork and handle_exit), three distinct rows.
	var sets int
	all, err := payloadtest.All(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		sets = max(sets, int(e.Verdicts))
	}
	if sets != 2 {
		t.Errorf("%d verdict sets, want 2 (shared sets are stored once)", sets)
	}
}

// TestEncodeVerdictsCost is what verdicts add: nothing to skip costs a few
// bytes (the directory's empty verdicts frame and one byte per entry in
// the compressed blocks); the rows, a frame of their own.
func TestEncodeVerdictsCost(t *testing.T) {
	entries := payloadtest.Entries(t)
	none := len(payloadtest.Encode(t, entries, nil))
	some := len(payloadtest.Encode(t, payloadtest.WithVerdicts(entries), nil))
	t.Logf("%d kernels: %d bytes without verdicts, %d with", len(entries), none, some)
	if some <= none {
		t.Errorf("verdicts cost nothing (%d, %d bytes): are they written?", none, some)
	}
	if some-none > 400 {
		t.Errorf("three rows in two sets cost %d bytes", some-none)
	}
}

func TestEncodeVerdictsRejects(t *testing.T) {
	base := payloadtest.WithVerdicts(payloadtest.Entries(t))
	i := slices.IndexFunc(base, func(e encode.Entry) bool { return len(e.Unloadable) > 0 })
	for name, edit := range map[string]func(p *encode.Prediction){
		"unknown program":     func(p *encode.Prediction) { p.Program = "handle_open" },
		"verdict loads":       func(p *encode.Prediction) { p.Verdict = 0 },
		"no reason":           func(p *encode.Prediction) { p.Reasons = nil },
		"no kind":             func(p *encode.Prediction) { p.Kind = "" },
		"kind of no verdict":  func(p *encode.Prediction) { p.Kind = "explodes" },
		"unprintable object":  func(p *encode.Prediction) { p.Object.Name = "bpf\x1b[2J.o" },
		"object without name": func(p *encode.Prediction) { p.Object.Name = "" },
		// Other kernels' rows list the object's three programs.
		"other programs": func(p *encode.Prediction) { p.Object.Programs = []string{"handle_fork"} },
	} {
		entries := slices.Clone(base)
		e := &entries[i]
		e.Unloadable = slices.Clone(e.Unloadable)
		edit(&e.Unloadable[0])
		if err := encode.Write(&bytes.Buffer{}, &encode.Payload{Entries: entries}, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	dup := slices.Clone(base)
	dup[i].Unloadable = append(slices.Clone(dup[i].Unloadable), dup[i].Unloadable[0])
	if err := encode.Write(&bytes.Buffer{}, &encode.Payload{Entries: dup}, nil); err == nil {
		t.Error("two verdicts for one program: no error")
	}
}

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/emit"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestCheck: -check passes on the outputs a run just wrote, leaving them
// as they are, and fails, naming each, on a payload or Go file that differs
// or is missing, on an earlier run's output this run would remove, and on
// outputs generated for other objects; it writes nothing but the report.
func TestCheck(t *testing.T) {
	t.Setenv("BTFEMBED_CACHE", t.TempDir())
	objects := filepath.Join(kerneltest.Dir(), "objects")
	report := filepath.Join(t.TempDir(), "report.json")
	args := func(out string, extra ...string) []string {
		return append([]string{"-q", "-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-kernels", "6.12.*", "-pkg", "agent",
			"-output", out + "/", "-report", report, filepath.Join(objects, "fields-el.o")}, extra...)
	}
	for _, tc := range []struct {
		name  string
		spoil func(out string) // after the run that writes the outputs
		extra []string         // more arguments of the -check run
		stale []string         // what the error names; none: passes
	}{
		{"fresh", func(string) {}, nil, nil},
		{"payload changed", func(out string) {
			p := filepath.Join(out, "kernelbtf.btfembed")
			b, _ := os.ReadFile(p)
			b[len(b)-1] ^= 1
			os.WriteFile(p, b, 0o644)
		}, nil, []string{"kernelbtf.btfembed"}},
		{"Go file missing", func(out string) { os.Remove(filepath.Join(out, "kernelbtf.go")) }, nil, []string{"kernelbtf.go"}},
		{"an earlier run's output", func(out string) {
			os.WriteFile(filepath.Join(out, "kernelbtf_riscv64.go"), []byte("// "+emit.GeneratedHeader+"\n\npackage agent\n"), 0o644)
		}, nil, []string{"kernelbtf_riscv64.go"}},
		{"other objects", func(string) {}, []string{filepath.Join(objects, "guards-el.o")}, []string{"kernelbtf.btfembed", "kernelbtf.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			if err := run(io.Discard, io.Discard, args(out)); err != nil {
				t.Fatal(err)
			}
			tc.spoil(out)
			past := time.Now().Add(-time.Hour).Truncate(time.Second)
			before := map[string][]byte{}
			entries, _ := os.ReadDir(out)
			for _, e := range entries {
				p := filepath.Join(out, e.Name())
				before[e.Name()], _ = os.ReadFile(p)
				os.Chtimes(p, past, past)
			}
			os.Remove(report)
			var stderr bytes.Buffer
			err := run(io.Discard, &stderr, append(args(out, tc.extra...), "-check"))
			switch {
			case len(tc.stale) == 0 && err != nil:
				t.Fatalf("-check on fresh outputs: %v", err)
			case len(tc.stale) == 0 && !strings.Contains(stderr.String(), "unchanged: "+filepath.Join(out, "kernelbtf.go")):
				t.Errorf("summary %q does not say the outputs are unchanged", stderr.String())
			case len(tc.stale) > 0 && !errors.Is(err, errStale):
				t.Fatalf("error %v, want errStale", err)
			}
			for _, name := range tc.stale {
				if !strings.Contains(err.Error(), filepath.Join(out, name)) {
					t.Errorf("error %v does not name %s", err, name)
				}
			}
			if err != nil && !strings.Contains(err.Error(), "run go generate") {
				t.Errorf("error %v does not say to run go generate", err)
			}
			entries, _ = os.ReadDir(out)
			if len(entries) != len(before) {
				t.Errorf("-check left %d files, there were %d", len(entries), len(before))
			}
			for _, e := range entries {
				p := filepath.Join(out, e.Name())
				b, _ := os.ReadFile(p)
				st, _ := os.Stat(p)
				if !bytes.Equal(b, before[e.Name()]) || !st.ModTime().Equal(past) {
					t.Errorf("-check wrote %s", e.Name())
				}
			}
			if _, err := os.Stat(report); err != nil {
				t.Errorf("-check did not write the report: %v", err)
			}
		})
	}
	err := run(io.Discard, io.Discard, args(t.TempDir(), "-check", "-shard", "0/2"))
	if err == nil || !strings.Contains(err.Error(), "-check and -shard") {
		t.Errorf("-check -shard: %v, want a usage error", err)
	}
	// What go generate runs in CI: the line as written, -check from the
	// environment.
	out := t.TempDir()
	if err := run(io.Discard, io.Discard, args(out)); err != nil {
		t.Fatal(err)
	}
	t.Setenv(checkEnvVar, "1")
	if err := run(io.Discard, io.Discard, args(out, filepath.Join(objects, "guards-el.o"))); !errors.Is(err, errStale) {
		t.Errorf("$%s=1 with other objects: %v, want errStale", checkEnvVar, err)
	}
}

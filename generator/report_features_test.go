package generator

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vocab"
)

// TestReportFeatures generates for the feature objects (programs using
// what older kernels lack) over real kernels, Debian 11's 5.10 and
// Debian 12's, and checks the load prediction the report gives, with the
// reason kinds, then again from the cache.
func TestReportFeatures(t *testing.T) {
	// The corpus must hold Debian 11's 5.10 beside Debian 12's kernels.
	root := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(
		kerneltest.SharedFile(t, "btfhub", "debian", "11", "x86_64", "5.10.0-32-amd64.btf.tar.xz")))))
	objs, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "features", "*-el.o"))
	if err != nil || len(objs) == 0 {
		t.Fatalf("no feature objects: %v", err)
	}
	args := &Args{Objects: objs, Corpus: []string{root}, Arch: []string{"x86_64"}, CacheDir: t.TempDir()}
	for _, run := range []string{"cold", "cached"} {
		res, err := Generate(context.Background(), args)
		if err != nil {
			t.Fatal(err)
		}
		r := res.Report
		if run == "cached" && r.CachedResults != len(r.Kernels) {
			t.Errorf("%s: %d of %d kernels from the cache", run, r.CachedResults, len(r.Kernels))
		}
		got := map[[2]string]ProgramReport{} // release, program
		for _, k := range r.Kernels {
			for _, p := range k.Programs {
				got[[2]string{k.Release, p.Program}] = p
			}
		}
		for _, tt := range []struct {
			release, program, verdict, reason string
		}{
			{"5.10.0-32-amd64", "loop", vocab.Fails.String(), "helper"},
			{"6.1.0-47-amd64", "loop", vocab.Loads.String(), ""},
			{"5.10.0-32-amd64", "bloom", vocab.Fails.String(), "map_type"},
			{"5.10.0-32-amd64", "guarded_strncmp", vocab.Loads.String(), ""},
			{"6.1.0-47-amd64", "cgrp_storage", vocab.Fails.String(), "map_type"},
			{"6.1.0-50-cloud-amd64", "rcu_kfunc", vocab.Fails.String(), "kfunc"},
			{"6.12.118+deb12-amd64", "cgrp_storage", vocab.Loads.String(), ""},
			{"6.12.118+deb12-amd64", "rcu_kfunc", vocab.Loads.String(), ""},
			{"6.1.0-47-amd64", "accept_all", vocab.Fails.String(), "prog_type"},
			{"6.12.118+deb12-amd64", "accept_all", vocab.Loads.String(), ""},
		} {
			p, ok := got[[2]string{tt.release, tt.program}]
			if !ok || p.Verdict != tt.verdict || p.Reason != tt.reason {
				t.Errorf("%s: %s on %s: %s [%s] %q, want %s [%s]", run, tt.program, tt.release, p.Verdict, p.Reason, p.Reasons, tt.verdict, tt.reason)
			}
		}
		if err := r.CheckLoadable(); !errors.Is(err, ErrUnloadable) {
			t.Errorf("%s: CheckLoadable: %v, want ErrUnloadable", run, err)
		}
		var js, text bytes.Buffer
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(js.String(), `"reason": "helper"`) {
			t.Errorf("%s: the JSON report has no helper reason", run)
		}
		if err := r.writePrograms(&text, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "helper bpf_strncmp (182) is not in this kernel: call at insn 10") ||
			!strings.Contains(text.String(), "[map_type]") {
			t.Errorf("%s: the text report lacks the helper and map type reasons:\n%s", run, text.String())
		}
	}
}

package generator

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vocab"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

func testObjects(t testing.TB) []string {
	t.Helper()
	objs, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*-el.o"))
	if err != nil || len(objs) == 0 {
		t.Fatalf("no testdata objects: %v", err)
	}
	return objs
}

// payloadOf encodes r's payload.
func payloadOf(tb testing.TB, r *Result) []byte {
	tb.Helper()
	p, err := r.Payload()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func testCorpus() []string { return []string{filepath.Join(kerneltest.Dir(), "btfhub")} }

var generateOnce = sync.OnceValues(func() (*Result, error) {
	objs, _ := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*-el.o"))
	return Generate(context.Background(), &Args{Objects: objs, Corpus: testCorpus()})
})

func generated(t *testing.T) *Result {
	t.Helper()
	res, err := generateOnce()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestGenerateRoundTrip runs the main job on the testdata corpus and then
// checks, independently of Generate's own verification, that what the
// runtime decodes from the payload relocates every program like the full
// kernel BTF does.
func TestGenerateRoundTrip(t *testing.T) {
	res := generated(t)
	assets, err := btfruntime.Open(payloadOf(t, res))
	if err != nil {
		t.Fatal(err)
	}
	kernels := kerneltest.Corpus(t)
	if keys, err := assets.Kernels(); err != nil || len(keys) != len(kernels) {
		t.Fatalf("payload has %d kernels (%v), testdata %d", len(keys), err, len(kernels))
	}
	objs := testObjects(t)
	for _, k := range kernels {
		t.Run(k.Name, func(t *testing.T) {
			sel, err := assets.Lookup(btfruntime.Key{Arch: k.Arch, Release: k.Release, Distro: "debian", Version: "12"})
			if err != nil {
				t.Fatal(err)
			}
			full, err := btf.LoadSpecFromReader(bytes.NewReader(k.BTF))
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := coremin.Load(objs...)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := coremin.Verify(loaded, []*btf.Spec{full}, []*btf.Spec{sel.Spec})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				t.Error(m)
			}
		})
	}
	// Payload leaves the report as it was: its writer counts the
	// payloads it writes.
	if len(res.Report.Kernels) != len(kernels) || res.Report.PayloadBytes != 0 {
		t.Fatalf("report: %d kernels, %d payload bytes; want %d, 0",
			len(res.Report.Kernels), res.Report.PayloadBytes, len(kernels))
	}
}

// TestGenerateDeterministic: the payload does not depend on the number of
// workers or on the order the objects are given in.
func TestGenerateDeterministic(t *testing.T) {
	want := payloadOf(t, generated(t))
	objs := testObjects(t)
	slices.Reverse(objs)
	res, err := Generate(context.Background(), &Args{Objects: objs, Corpus: testCorpus(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(payloadOf(t, res), want) {
		t.Fatal("payload differs between 1 worker, objects reversed, and the default")
	}
}

// TestGenerateReport checks coverage facts that follow from kernel history:
// task_struct's "state" became "__state" in 5.14, so the flavour reading
// task_struct___old.state is poisoned on every (6.x) testdata kernel, while
// task_struct.pid resolves everywhere.
func TestGenerateReport(t *testing.T) {
	r := generated(t).Report
	for _, k := range r.Kernels {
		var old, pid bool
		for _, u := range k.Unresolved {
			if u.Type == "task_struct___old" && u.Kind == "byte_off" {
				old = u.Status == "poisoned"
			}
			if u.Type == "task_struct" && u.Access == "0:0" {
				pid = true
			}
		}
		if !old {
			t.Errorf("%s: task_struct___old byte_off not reported poisoned", k.key())
		}
		if pid {
			t.Errorf("%s: a task_struct relocation at 0:0 reported unresolved", k.key())
		}
		if len(k.KernelTypeIDs) == 0 {
			t.Errorf("%s: types-el.o's bpf_core_type_id_kernel not reported", k.key())
		}
	}
	var table, verbose bytes.Buffer
	if err := r.WriteTable(&table, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteTable(&verbose, &TableOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		table   *bytes.Buffer
		want    string
		present bool
	}{
		{&table, "x86_64/6.12.118+deb12-amd64 (debian 12)", true},
		{&table, "bpf_core_type_id_kernel", true},
		// guards.c: read unguarded, task_struct.mm_cid fails on 6.1.
		{&table, "  field_unguarded  ", true},
		{&table, "reachable: byte_off task_struct.mm_cid poisoned", true},
		// Read behind bpf_core_field_exists: loads, listed with -v only.
		{&table, "  field_guarded  ", false},
		{&table, "Guarded misses", false},
		{&verbose, "Guarded misses", true},
		{&verbose, "guards-el.o field_guarded: byte_off task_struct.mm_cid poisoned", true},
		{&verbose, "task_struct___old", true},
	} {
		if strings.Contains(tt.table.String(), tt.want) != tt.present {
			t.Errorf("table has %q: %v, want %v:\n%s", tt.want, !tt.present, tt.present, tt.table.String())
		}
	}
}

// TestGeneratePredictions checks the load prediction of guards.c in the
// report: per kernel, every program, with the verdict its comment in
// guards.c gives (internal/predict tests each verdict).
func TestGeneratePredictions(t *testing.T) {
	r := generated(t).Report
	for _, k := range r.Kernels {
		got := map[string]string{}
		for _, p := range k.Programs {
			if strings.HasSuffix(p.Object, "guards-el.o") {
				got[p.Program] = p.Verdict
			}
		}
		want := vocab.Loads.String()
		if strings.HasPrefix(k.Release, "6.1.") {
			want = vocab.Fails.String()
		}
		if got["field_unguarded"] != want || got["field_guarded"] != vocab.Loads.String() || got["missing_unguarded"] != vocab.Fails.String() {
			t.Errorf("%s: guards-el.o predictions %v", k.key(), got)
		}
	}
	if err := r.CheckLoadable(); !errors.Is(err, ErrUnloadable) {
		t.Errorf("CheckLoadable: %v, want ErrUnloadable", err)
	}
}

// TestVerifyCatchesWrongBTF feeds the oracle a kernel's entry computed for
// another kernel: offsets differ, so it must fail with errVerify, asking
// each program whole (no raw BTF to count candidates) and asking each
// relocation once.
func TestVerifyCatchesWrongBTF(t *testing.T) {
	objs, err := loadObjects(testObjects(t))
	if err != nil {
		t.Fatal(err)
	}
	k61 := kerneltest.ByName(t, "6.1.0-47-amd64")
	k612 := kerneltest.ByName(t, "6.12.118+deb12-amd64")
	other, err := objs.process(&corpus.Kernel{VMLinux: k612.BTF})
	if err != nil {
		t.Fatal(err)
	}
	full, err := fullTargets(&corpus.Kernel{VMLinux: k61.BTF}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fullRaw, err := coremin.NewTarget(k61.BTF, nil)
	if err != nil {
		t.Fatal(err)
	}
	minRaw, err := coremin.NewTarget(other.entry.VMLinux, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range [][2][]*coremin.Target{{nil, nil}, {{fullRaw}, {minRaw}}} {
		_, err = objs.verify(full, raw[0], &other.entry, raw[1])
		if !errors.Is(err, errVerify) {
			t.Fatalf("verify of 6.12's BTF against 6.1 (raw %v): %v, want errVerify", raw[0] != nil, err)
		}
	}
}

// TestGenerateSkipsBadKernels: an unreadable archive is reported and
// skipped, and fails the run under Strict.
func TestGenerateSkipsBadKernels(t *testing.T) {
	dir := t.TempDir()
	good := kerneltest.Corpus(t)[0]
	src := filepath.Join(kerneltest.Dir(), "btfhub", good.Name+".btf.tar.xz")
	dst := filepath.Join(dir, good.Name+".btf.tar.xz")
	bad := filepath.Join(filepath.Dir(dst), "9.9.9-broken.btf.tar.xz")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	objs := testObjects(t)[:1]

	res, err := Generate(context.Background(), &Args{Objects: objs, Corpus: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Report.Kernels) != 1 || len(res.Report.Skipped) != 1 || res.Report.Skipped[0].Path != bad {
		t.Fatalf("kernels %d, skipped %+v; want 1 kernel and %s skipped", len(res.Report.Kernels), res.Report.Skipped, bad)
	}
	if _, err := Generate(context.Background(), &Args{Objects: objs, Corpus: []string{dir}, Strict: true}); err == nil || !strings.Contains(err.Error(), "9.9.9-broken") {
		t.Fatalf("strict: %v, want an error naming the broken archive", err)
	}
}

// TestGenerateObjectLoadError: an object whose ELF header pairs it with
// the kernels but whose BTF does not load fails the run with loading's
// error, naming the object, with the cache on and off, while the
// corpus is already being read (the objects load beside it).
func TestGenerateObjectLoadError(t *testing.T) {
	obj := testObjects(t)[0]
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".BTF")
	if sec == nil {
		t.Fatalf("%s has no .BTF", obj)
	}
	copy(data[sec.Offset:], make([]byte, 8)) // the magic and header
	bad := filepath.Join(t.TempDir(), filepath.Base(obj))
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	objs := append([]string{bad}, testObjects(t)[1:]...)
	for _, cacheDir := range []string{"", t.TempDir()} {
		res, err := Generate(context.Background(), &Args{Objects: objs, Corpus: testCorpus(), Workers: 2, CacheDir: cacheDir})
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Fatalf("cache %q: result %v, error %v; want an error naming %s", cacheDir, res != nil, err, bad)
		}
	}
}

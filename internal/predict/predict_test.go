package predict

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vocab"
)

var (
	specsMu sync.Mutex
	specs   = map[string]*btf.Spec{}
)

// object reads a BPF object as Collection takes it.
func object(tb testing.TB, path string) (*ebpf.CollectionSpec, *coremin.Object) {
	tb.Helper()
	coll, err := ebpf.LoadCollectionSpec(path)
	if err != nil {
		tb.Fatal(err)
	}
	relos, err := coremin.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return coll, relos[0]
}

// texts are the reasons' texts.
func texts(rs []Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Text
	}
	return out
}

// kernelSpec is a kernel's BTF as cilium/ebpf reads it, parsed once per
// test binary.
func kernelSpec(tb testing.TB, k kerneltest.Kernel) *btf.Spec {
	tb.Helper()
	specsMu.Lock()
	defer specsMu.Unlock()
	if s, ok := specs[k.Name]; ok {
		return s
	}
	s, err := btf.LoadSpecFromReader(bytes.NewReader(k.BTF))
	if err != nil {
		tb.Fatalf("%s: %v", k.Name, err)
	}
	specs[k.Name] = s
	return s
}

// TestGuards predicts testdata/objects/guards.c on the testdata kernels
// and the running one; each program's comment in guards.c says why it
// loads or fails where. task_struct.mm_cid and BPF_PROG_TYPE_NETFILTER
// exist from 6.4 on; the ___fake member and btfembed_missing nowhere.
func TestGuards(t *testing.T) {
	coll, relos := object(t, filepath.Join(kerneltest.Dir(), "objects", "guards-el.o"))
	// Verdicts on a 6.1 kernel and on a later one (6.12, and the running
	// kernel when it is 6.8 or later).
	want := map[string][2]vocab.Verdict{
		"field_guarded":     {vocab.Loads, vocab.Loads},
		"field_unguarded":   {vocab.Fails, vocab.Loads},
		"missing_guarded":   {vocab.Loads, vocab.Loads},
		"missing_unguarded": {vocab.Fails, vocab.Fails},
		"subprog_guarded":   {vocab.Loads, vocab.Loads},
		"subprog_unguarded": {vocab.Fails, vocab.Loads},
		// 6.1 verifies global_cid whether or not the call is reached.
		"global_guarded": {vocab.Fails, vocab.Loads},
		"type_guarded":   {vocab.Loads, vocab.Loads},
		"type_unguarded": {vocab.Fails, vocab.Fails},
		"enum_guarded":   {vocab.Loads, vocab.Loads},
		"enum_unguarded": {vocab.Fails, vocab.Loads},
		"spilled_guard":  {vocab.Loads, vocab.Loads},
		"combined_guard": {vocab.Loads, vocab.Loads},
		// The guard is a .rodata value the user sets at load time.
		"rodata_guarded":     {vocab.Unknown, vocab.Loads},
		"runtime_and_guard":  {vocab.Loads, vocab.Loads},
		"runtime_only":       {vocab.Fails, vocab.Loads},
		"size_not_a_guard":   {vocab.Fails, vocab.Loads},
		"loop_guard":         {vocab.Loads, vocab.Loads},
		"callback_guarded":   {vocab.Loads, vocab.Loads},
		"callback_unguarded": {vocab.Fails, vocab.Loads},
		// LINUX_KERNEL_VERSION comes from .kconfig, filled at load time.
		"version_guarded": {vocab.Unknown, vocab.Loads},
	}
	kernels := kerneltest.Corpus(t)
	if r := kerneltest.Running(t); decisions(modelFor(r.Release, nil)) == latest {
		kernels = append(kernels, r)
	}
	for _, k := range kernels {
		spec := kernelSpec(t, k)
		later := 1
		if strings.HasPrefix(k.Release, "6.1.") {
			later = 0
		}
		preds := Collection("guards-el.o", coll, relos, k.Name, []*btf.Spec{spec}, &Options{Release: k.Release})
		if len(preds) != len(want) {
			t.Fatalf("%s: %d predictions, want %d", k.Name, len(preds), len(want))
		}
		for _, p := range preds {
			if w := want[p.Program][later]; p.Verdict != w {
				t.Errorf("%s: %s %q, want %s", p, p.Verdict, p.Reasons, w)
			}
			if p.Verdict != vocab.Loads && len(p.Reasons) == 0 {
				t.Errorf("%s: %s without a reason", p, p.Verdict)
			}
		}
	}
}

// TestReasonsNameFields checks that a reason names the relocation by its
// C names and the guarded misses are listed.
func TestReasonsNameFields(t *testing.T) {
	coll, relos := object(t, filepath.Join(kerneltest.Dir(), "objects", "guards-el.o"))
	k := kerneltest.ByName(t, "6.1.0-47-amd64")
	spec := kernelSpec(t, k)
	got := map[string]Prediction{}
	for _, p := range Collection("guards-el.o", coll, relos, k.Name, []*btf.Spec{spec}, &Options{Release: k.Release}) {
		got[p.Program] = p
	}
	for _, tt := range []struct {
		program, reason, guarded string
	}{
		{"field_unguarded", "reachable: byte_off task_struct.mm_cid poisoned at insn 1", ""},
		{"subprog_unguarded", "byte_off task_struct.mm_cid poisoned at insn 10 in cid_of", ""},
		{"type_unguarded", "type_size struct btfembed_missing poisoned", ""},
		{"enum_unguarded", "enumval_value bpf_prog_type::BPF_PROG_TYPE_NETFILTER poisoned", ""},
		{"field_guarded", "", "byte_off task_struct.mm_cid poisoned at insn 3"},
		{"missing_guarded", "", "byte_off task_struct___fake.btfembed_missing poisoned"},
		{"rodata_guarded", `the jump at insn 2 ("if (read_cid)")`, ""},
		{"callback_unguarded", "byte_off task_struct.mm_cid poisoned at insn 8 in loop_body_unguarded", ""},
	} {
		p := got[tt.program]
		if tt.reason != "" && !strings.Contains(strings.Join(texts(p.Reasons), "\n"), tt.reason) {
			t.Errorf("%s: reasons %q, want one containing %q", tt.program, p.Reasons, tt.reason)
		}
		if tt.guarded != "" && !strings.Contains(strings.Join(p.Guarded, "\n"), tt.guarded) {
			t.Errorf("%s: guarded %q, want one containing %q", tt.program, p.Guarded, tt.guarded)
		}
	}
}

// TestRelocationError: relocations cilium/ebpf refuses (ambiguous
// candidates) fail the program with cilium/ebpf's error for each local
// type, in type order whatever the order cilium/ebpf met them in.
func TestRelocationError(t *testing.T) {
	coll, relos := object(t, filepath.Join(kerneltest.Dir(), "objects", "candidates-el.o"))
	k := kerneltest.ByName(t, "6.12.118+deb12-amd64")
	spec := kernelSpec(t, k)
	want := []string{
		`relocate Struct:"elf_thread_core_info": byte_off: multiple types match`,
		`relocate Struct:"elf_thread_core_info___chars": byte_off: multiple types match`,
		`relocate Struct:"irq_info": byte_off: multiple types match`,
	}
	for range 3 {
		var got Prediction
		for _, p := range Collection("candidates-el.o", coll, relos, k.Name, []*btf.Spec{spec}, nil) {
			if p.Program == "disagree" {
				got = p
			}
		}
		if got.Verdict != vocab.Fails || len(got.Reasons) != len(want) {
			t.Fatalf("disagree: %s %q", got.Verdict, got.Reasons)
		}
		for i, w := range want {
			if r := got.Reasons[i]; r.Kind != vocab.KindCORE || !strings.HasPrefix(r.Text, "cilium/ebpf: apply CO-RE relocations: ") || !strings.Contains(r.Text, w) {
				t.Errorf("reason %d: %q, want cilium/ebpf's %q", i, got.Reasons[i], w)
			}
		}
	}
}

// TestObjects: the path-taking wrapper names each prediction by object
// path and kernel, and names the file it cannot read.
func TestObjects(t *testing.T) {
	k := kerneltest.ByName(t, "6.12.118+deb12-amd64")
	targets := []*btf.Spec{kernelSpec(t, k)}
	obj := filepath.Join(kerneltest.Dir(), "objects", "guards-el.o")
	preds, err := Objects([]string{obj}, k.Name, targets, &Options{Release: k.Release})
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != 21 || preds[0].Object != obj || preds[0].Kernel != k.Name || preds[0].Program != "callback_guarded" {
		t.Fatalf("%d predictions, first %+v", len(preds), preds[0])
	}
	missing := filepath.Join(t.TempDir(), "missing.o")
	if _, err := Objects([]string{missing}, k.Name, targets, nil); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing object: %v", err)
	}
}

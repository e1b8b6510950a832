package generator

import (
	"bytes"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/vocab"
)

func TestObjectStem(t *testing.T) {
	for in, want := range map[string]string{
		"bpf_x86_bpfel.o":           "bpf",
		"pkg/bpf_arm64_bpfel.o":     "pkg/bpf",
		"agent_bpfel.o":             "agent",
		"agent_s390_bpfeb.o":        "agent",
		"my_probe_bpfel.o":          "my_probe", // probe is no bpf2go architecture
		"fields-el.o":               "fields-el.o",
		"not_an_object_bpfel.so":    "not_an_object_bpfel.so",
		"testdata/objects/guards.o": "testdata/objects/guards.o",
	} {
		if got := objectStem(in); got != want {
			t.Errorf("objectStem(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProgramsCountedAsWritten: bpf2go's amd64 and arm64 objects hold the
// same programs, each checked on its own architecture's kernels; the
// report counts and lists each program once, and -fail-on-unloadable's
// error names it with the right plural.
func TestProgramsCountedAsWritten(t *testing.T) {
	prog := func(object, program, verdict string) ProgramReport {
		p := ProgramReport{Object: object, Program: program, Verdict: verdict}
		if verdict == vocab.Fails.String() {
			p.Reasons = []string{"reachable: byte_off task_struct.mm_cid poisoned at insn 3"}
		}
		return p
	}
	r := &Report{Kernels: []KernelReport{
		{Arch: "x86_64", Release: "6.1", Programs: []ProgramReport{prog("bpf_x86_bpfel.o", "exec", vocab.Fails.String()), prog("bpf_x86_bpfel.o", "exit", vocab.Loads.String())}},
		{Arch: "arm64", Release: "6.1", Programs: []ProgramReport{prog("bpf_arm64_bpfel.o", "exec", vocab.Loads.String()), prog("bpf_arm64_bpfel.o", "exit", vocab.Loads.String())}},
	}}
	var b bytes.Buffer
	if err := r.WriteTable(&b, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"1 of 2 programs do not load",
		"bpf_arm64_bpfel.o,bpf_x86_bpfel.o  exec     fails  ok",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if programs, kernels := r.Unloadable(); programs != 1 || kernels != 1 {
		t.Errorf("Unloadable = %d programs, %d kernels, want 1, 1", programs, kernels)
	}
	want := "programs predicted not to load: 1 program fails on 1 of 2 kernels: exec"
	if err := r.CheckLoadable(); err == nil || err.Error() != want {
		t.Errorf("CheckLoadable = %v, want %q", err, want)
	}

	one := &Report{Kernels: []KernelReport{{Arch: "x86_64", Release: "6.1", Programs: []ProgramReport{prog("bpf_x86_bpfel.o", "exec", vocab.Loads.String())}}}}
	b.Reset()
	if err := one.WriteTable(&b, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Load prediction: the program loads on every kernel.") {
		t.Errorf("one program:\n%s", b.String())
	}
}

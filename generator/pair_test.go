package generator

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/cmd/bpf2go/gen"

	"github.com/btfembed/btfembed/internal/bpfobj"
	"github.com/btfembed/btfembed/internal/kerneltest"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

func TestPairObject(t *testing.T) {
	header := func(t *testing.T, name string) []byte {
		t.Helper()
		h, err := bpfobj.ReadHeader(filepath.Join(kerneltest.Dir(), "objects", name))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	el, eb := header(t, "fields-el.o"), header(t, "fields-eb.o")
	notBPF, err := bpfobj.ReadHeader("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		header  []byte
		want    []string // kernel arches accepted, of kernelarch.Arches()
		wantErr string
	}{
		{"bpf_x86_bpfel.o", el, []string{"i386", "x86_64"}, ""},
		{"bpf_arm64_bpfel.o", el, []string{"arm64"}, ""},
		{"agent_powerpc_bpfeb.o", eb, []string{"ppc64"}, ""},
		{"agent_powerpc_bpfel.o", el, []string{"ppc64le"}, ""},
		{"bpf_s390_bpfeb.o", eb, []string{"s390x"}, ""},
		{"bpf_bpfel.o", el, []string{"arm", "arm64", "i386", "loongarch64", "mips64el", "ppc64le", "riscv64", "x86_64"}, ""},
		{"bpf_bpfeb.o", eb, []string{"ppc64", "s390x"}, ""},
		{"my_tool_bpfel.o", el, []string{"arm", "arm64", "i386", "loongarch64", "mips64el", "ppc64le", "riscv64", "x86_64"}, ""},
		{"fields-eb.o", eb, []string{"ppc64", "s390x"}, ""},
		{"bpf_x86_bpfeb.o", el, nil, "named bpfeb"},
		{"bpf_s390_bpfel.o", el, nil, "never bpfel"},
		{"bpf_mips_bpfeb.o", eb, nil, "no kernels of bpf2go architecture mips"},
		{"bpf_bpfel.o", notBPF, nil, "want EM_BPF"},
		{"bpf_bpfel.o", []byte("short"), nil, "not an ELF file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := pairObject(tc.name, tc.header)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := archesFor([]pairing{p}); !slices.Equal(got, tc.want) {
				t.Errorf("pairs with %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBpf2goArches compares pair.go's constant table with the one bpf2go
// generates with, gen.TargetsByGoArch (of the cilium/ebpf version go.mod
// pins): a cilium/ebpf upgrade that adds or renames a target fails here,
// not in a user's pairing.
func TestBpf2goArches(t *testing.T) {
	want := map[string][]string{}
	for goarch, target := range gen.TargetsByGoArch() {
		if target.IsGeneric() {
			continue
		}
		linux, _, _ := strings.Cut(target.Suffix(), "_") // <linux>_<bpfel|bpfeb>
		want[linux] = append(want[linux], string(goarch))
	}
	for linux := range want {
		slices.Sort(want[linux])
	}
	if !maps.EqualFunc(bpf2goArches, want, slices.Equal) {
		t.Errorf("bpf2goArches = %v, bpf2go's targets say %v", bpf2goArches, want)
	}
	for linux, goarches := range bpf2goArches {
		if !slices.IsSorted(goarches) {
			t.Errorf("bpf2goArches[%q] = %v, not sorted", linux, goarches)
		}
	}
}

// oneKernelPerArch selects 6.1.0-47-amd64 and 6.1.0-57-arm64 of the
// testdata corpus.
const oneKernelPerArch = "6.1.0-[45]7-*"

// TestGeneratePairs checks that an object is matched only against the
// kernels it pairs with: an x86 object is not checked on arm64 kernels,
// and ObjectArches narrows a generic object.
func TestGeneratePairs(t *testing.T) {
	src := filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	x86 := filepath.Join(dir, "bpf_x86_bpfel.o")
	generic := filepath.Join(dir, "bpf_bpfel.o")
	for _, p := range []string{x86, generic} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		objects []string
		narrow  map[string][]string
		want    map[string][]string // kernel arch -> objects checked
		wantErr string
	}{
		{"x86 object", []string{x86}, nil, map[string][]string{"x86_64": {x86}}, ""},
		{"generic object", []string{generic}, nil, map[string][]string{"x86_64": {generic}, "arm64": {generic}}, ""},
		{"both", []string{x86, generic}, nil, map[string][]string{"x86_64": {x86, generic}, "arm64": {generic}}, ""},
		{"generic narrowed", []string{generic}, map[string][]string{generic: {"aarch64"}}, map[string][]string{"arm64": {generic}}, ""},
		{"x86 narrowed to arm64", []string{x86}, map[string][]string{x86: {"arm64"}}, nil, "not with arm64"},
		{"generic narrowed to nothing", []string{generic}, map[string][]string{generic: {}}, nil, "narrowed to no kernel architecture"},
		{"generic narrowed to an unknown arch", []string{generic}, map[string][]string{generic: {"vax"}}, nil, "not with vax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Generate(t.Context(), &Args{Objects: tc.objects, ObjectArches: tc.narrow, Corpus: testCorpus(), Kernels: oneKernelPerArch})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, k := range res.Report.Kernels {
				seen[k.Arch] = true
				if want, ok := tc.want[k.Arch]; !ok || !slices.Equal(k.Objects, want) {
					t.Errorf("%s: checked %v, want %v", k.key(), k.Objects, want)
				}
			}
			for arch := range tc.want {
				if !seen[arch] {
					t.Errorf("no %s kernel processed", arch)
				}
			}
		})
	}
}

// TestForArch splits a result by architecture: each part holds only its
// architecture's kernels, and an architecture without kernels gives an
// empty payload the runtime opens.
func TestForArch(t *testing.T) {
	res := generated(t)
	total := 0
	for _, arch := range []string{"x86_64", "arm64", "riscv64"} {
		part := res.ForArch(arch)
		assets, err := btfruntime.Open(payloadOf(t, part))
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		keys, err := assets.Kernels()
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		for _, k := range keys {
			if k.Arch != arch {
				t.Errorf("%s payload holds %s", arch, k)
			}
		}
		if len(part.Report.Kernels) != len(keys) {
			t.Errorf("%s: report lists %d kernels, payload %d", arch, len(part.Report.Kernels), len(keys))
		}
		total += len(keys)
	}
	if total != len(res.Report.Kernels) {
		t.Errorf("parts hold %d kernels, the whole %d", total, len(res.Report.Kernels))
	}
}

// TestReportCountsPairedKernels: "on n/m kernels" counts, in m, only the
// kernels the object was checked on.
func TestReportCountsPairedKernels(t *testing.T) {
	r := &Report{Kernels: []KernelReport{
		{Arch: "x86_64", Release: "a", Objects: []string{"bpf_x86_bpfel.o"}, Unresolved: []RelocationReport{{Object: "bpf_x86_bpfel.o", Kind: "byte_off", Type: "pt_regs", Status: "poisoned"}}},
		{Arch: "x86_64", Release: "b", Objects: []string{"bpf_x86_bpfel.o"}},
		{Arch: "arm64", Release: "c", Objects: []string{"bpf_arm64_bpfel.o"}},
	}}
	var b strings.Builder
	if err := r.WriteTable(&b, &TableOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "poisoned on 1/2 kernels") {
		t.Errorf("table does not count the x86 object's two kernels:\n%s", b.String())
	}
}

// TestPairingPtRegs is the case pairing exists for: bpf2go's x86 and
// arm64 objects of one kprobe read pt_regs members that only their own
// architecture's kernels have. Paired, no kernel reports an unresolved
// relocation; the x86 object unpaired (named so that only its byte order
// is known) is checked on arm64 too, where its pt_regs reads are poisoned.
func TestPairingPtRegs(t *testing.T) {
	dir := filepath.Join(kerneltest.Dir(), "objects", "bpf2go")
	x86, arm64 := filepath.Join(dir, "kprobe_x86_bpfel.o"), filepath.Join(dir, "kprobe_arm64_bpfel.o")
	res, err := Generate(t.Context(), &Args{Objects: []string{x86, arm64}, Corpus: testCorpus(), Kernels: oneKernelPerArch})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range res.Report.Kernels {
		if len(k.Unresolved) > 0 {
			t.Errorf("%s: %d unresolved relocations, first %+v", k.key(), len(k.Unresolved), k.Unresolved[0])
		}
	}

	data, err := os.ReadFile(x86)
	if err != nil {
		t.Fatal(err)
	}
	unpaired := filepath.Join(t.TempDir(), "kprobe.o")
	if err := os.WriteFile(unpaired, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Generate(t.Context(), &Args{Objects: []string{unpaired}, Corpus: testCorpus(), Kernels: oneKernelPerArch})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range res.Report.Kernels {
		poisoned := slices.ContainsFunc(k.Unresolved, func(r RelocationReport) bool {
			return r.Type == "pt_regs" && r.Status == "poisoned"
		})
		if poisoned != (k.Arch == "arm64") {
			t.Errorf("%s: pt_regs poisoned %v, want %v", k.key(), poisoned, k.Arch == "arm64")
		}
	}
}

package coremin

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/libbpftest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestLibbpfAgrees lets libbpf judge the minimized BTF: for every test
// object and the execsnoop example (each little-endian object: libbpf
// loads only the host's byte order) on every kernel, minimized for the
// object alone and for all of them together, libbpf's CO-RE decisions
// with btf_custom_path = the minimized BTF must equal those with the full
// BTF.
func TestLibbpfAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every object three times per kernel with libbpf")
	}
	loader := libbpftest.Build(t)
	var objs []string
	for _, o := range append(testObjects(t), ownObjects(t)...) {
		if strings.HasSuffix(o, "-el.o") {
			objs = append(objs, o)
		}
	}
	objs = append(objs, "../../examples/execsnoop/bpf_x86_bpfel.o", "../../examples/execsnoop/bpf_arm64_bpfel.o")
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			data := k.raw
			raw, _ := kernelSpecs(t, k)
			full := filepath.Join(t.TempDir(), "full.btf")
			if err := os.WriteFile(full, data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, obj := range objs {
				t.Run(filepath.Base(obj), func(t *testing.T) {
					libbpfAgrees(t, loader, []string{obj}, raw, full)
				})
			}
			t.Run("all", func(t *testing.T) {
				libbpfAgrees(t, loader, objs, raw, full)
			})
		})
	}
}

// TestLibbpfAgreesCilium: cilium/ebpf's CO-RE test objects on the targets
// its tests use.
func TestLibbpfAgreesCilium(t *testing.T) {
	loader := libbpftest.Build(t)
	// tags-el.elf has no CO-RE relocation.
	forCiliumObjects(t, []string{"relocs", "relocs_enum", "relocs_read"}, func(t *testing.T, obj string, raw *rawbtf.Spec, _ *btf.Spec) {
		if strings.HasSuffix(obj, "-eb.elf") {
			t.Skip("libbpf loads the host's byte order only")
		}
		full := filepath.Join(t.TempDir(), "full.btf")
		if err := os.WriteFile(full, raw.Raw(), 0o644); err != nil {
			t.Fatal(err)
		}
		libbpfAgrees(t, loader, []string{obj}, raw, full)
	})
}

// libbpfAgrees minimizes raw (whose file is full) for objs together and
// compares libbpf's decisions on both, object by object.
func libbpfAgrees(t *testing.T, loader *libbpftest.Loader, objs []string, raw *rawbtf.Spec, full string) {
	t.Helper()
	res := matchObjects(t, objs, raw)
	blob, _, err := Minimize(res)
	if err != nil {
		t.Fatal(err)
	}
	min := filepath.Join(t.TempDir(), "min.btf")
	if err := os.WriteFile(min, blob, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		want, err := loader.Decide(obj, full)
		if errors.Is(err, libbpftest.ErrNoBPF) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := loader.Decide(obj, min)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Relocations) == 0 && want.Err == "" {
			t.Fatalf("libbpf states no CO-RE decision for %s:\n%s", obj, want.Log)
		}
		for _, d := range libbpftest.Diff(want, got) {
			t.Errorf("%s: libbpf on full BTF vs minimized: %s", filepath.Base(obj), d)
		}
	}
}

// TestLibbpfDiffCatches: the libbpf check sees a difference where there
// is one, here two kernels whose task_struct layouts differ.
func TestLibbpfDiffCatches(t *testing.T) {
	loader := libbpftest.Build(t)
	ks := kernels(t)
	paths := make([]string, 2)
	for i, name := range []string{"6.1.0-47-amd64", "6.12.118+deb12-amd64"} {
		j := slices.IndexFunc(ks, func(k kernel) bool { return k.name == name })
		if j < 0 {
			t.Fatalf("no testdata kernel %s", name)
		}
		data := ks[j].raw
		paths[i] = filepath.Join(t.TempDir(), name+".btf")
		if err := os.WriteFile(paths[i], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	obj := "../../testdata/objects/fields-el.o"
	var ds []*libbpftest.Decisions
	for _, p := range paths {
		d, err := loader.Decide(obj, p)
		if errors.Is(err, libbpftest.ErrNoBPF) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if diff := libbpftest.Diff(ds[0], ds[1]); len(diff) == 0 {
		t.Error("libbpf decides the same for fields-el.o on 6.1 and 6.12")
	}
}

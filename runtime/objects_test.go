package runtime_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	btfruntime "github.com/btfembed/btfembed/runtime"
)

// loadSpec reads a collection spec from path, relative to the module.
func loadSpec(t *testing.T, path string) *ebpf.CollectionSpec {
	t.Helper()
	spec, err := ebpf.LoadCollectionSpec(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestCheck: a selection from the execsnoop example's payload accepts the
// collection of the object it was generated for, whole or with programs
// deleted, and of any object with the same relocations (the arm64 one:
// one C source, its kernel types declared in it); it refuses, naming the
// generated file and saying to run go generate, the collection of
// another object and one whose object was rebuilt with other relocations.
// Prune and LoadAndAssign refuse what Check refuses, before loading
// anything, and a selection of the kernel's own BTF checks too.
func TestCheck(t *testing.T) {
	b, err := os.ReadFile(execsnoopPayload)
	if err != nil {
		t.Fatal(err)
	}
	assets, err := btfruntime.OpenWithOptions(b, &btfruntime.OpenOptions{GoFile: "kernelbtf_amd64.go"})
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := assets.Lookup(btfruntime.Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian", Version: "12"})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	vmlinux, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skip("no kernel BTF to build a host tree with:", err)
	}
	writeHostFile(t, filepath.Join(root, "sys/kernel/btf/vmlinux"), vmlinux)
	kernel, err := assets.Select(&btfruntime.SelectOptions{HostRoot: root, Arch: "x86_64", Release: "6.99.0"})
	if err != nil || kernel.Source != btfruntime.SourceKernel {
		t.Fatalf("kernel selection %v, %v", kernel, err)
	}

	withoutCount := func(t *testing.T) *ebpf.CollectionSpec {
		spec := execsnoopSpec(t)
		delete(spec.Programs, "count_exec")
		return spec
	}
	rebuilt := func(t *testing.T) *ebpf.CollectionSpec {
		// handle_exec without its first CO-RE relocation, as if the
		// source no longer read that field.
		spec := execsnoopSpec(t)
		p := spec.Programs["handle_exec"]
		i := slices.IndexFunc(p.Instructions, func(ins asm.Instruction) bool { return btf.CORERelocationMetadata(&ins) != nil })
		p.Instructions = slices.Delete(p.Instructions, i, i+1)
		return spec
	}
	for _, tc := range []struct {
		name string
		spec func(t *testing.T) *ebpf.CollectionSpec
		want string // in the error; "" for none
	}{
		{"its object", execsnoopSpec, ""},
		{"its object without count_exec", withoutCount, ""},
		{"the arm64 object", func(t *testing.T) *ebpf.CollectionSpec { return loadSpec(t, "examples/execsnoop/bpf_arm64_bpfel.o") }, ""},
		{"no program", func(t *testing.T) *ebpf.CollectionSpec { return &ebpf.CollectionSpec{} }, ""},
		{"another object", func(t *testing.T) *ebpf.CollectionSpec { return loadSpec(t, "testdata/objects/fields-el.o") },
			"kernelbtf_amd64.go was generated for other objects: run go generate (bpf_x86_bpfel.o has no program field_info; bpf_x86_bpfel.o has no program read_fields)"},
		{"its object rebuilt", rebuilt,
			"kernelbtf_amd64.go was generated for other objects: run go generate (the CO-RE relocations of handle_exec are not those of bpf_x86_bpfel.o's)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, sel := range []*btfruntime.Selection{embedded, kernel} {
				err := sel.Check(tc.spec(t))
				if tc.want == "" && err != nil {
					t.Fatalf("%s: %v", sel.Source, err)
				}
				if tc.want != "" && (!errors.Is(err, btfruntime.ErrOtherObjects) || err.Error() != tc.want) {
					t.Fatalf("%s: error %v, want %q", sel.Source, err, tc.want)
				}
			}
			if tc.want == "" {
				return
			}
			spec := tc.spec(t)
			before := names(spec.Programs)
			if _, err := embedded.Prune(spec, nil); !errors.Is(err, btfruntime.ErrOtherObjects) {
				t.Errorf("Prune: %v, want ErrOtherObjects", err)
			}
			var objs struct {
				P *ebpf.Program `ebpf:"handle_exec"`
			}
			if _, err := embedded.LoadAndAssign(spec, &objs, nil, nil); !errors.Is(err, btfruntime.ErrOtherObjects) || objs.P != nil {
				t.Errorf("LoadAndAssign: %v, program %v; want ErrOtherObjects and nothing loaded", err, objs.P)
			}
			if !slices.Equal(names(spec.Programs), before) {
				t.Errorf("the refused spec lost programs: %v, was %v", names(spec.Programs), before)
			}
		})
	}
}

// TestCheckNothingRecorded: a payload that records no objects (format 4,
// written before btfembed recorded them) checks nothing, and a payload
// opened without GoFile names itself in the error.
func TestCheckNothingRecorded(t *testing.T) {
	key := btfruntime.Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian", Version: "12"}
	other := loadSpec(t, "testdata/objects/fields-el.o")
	for _, tc := range []struct {
		payload, want string
	}{
		{"../internal/payload/testdata/v4-execsnoop-amd64.btfembed", ""},
		{execsnoopPayload, "the payload was generated for other objects: run go generate"},
	} {
		b, err := os.ReadFile(tc.payload)
		if err != nil {
			t.Fatal(err)
		}
		assets, err := btfruntime.Open(b)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := assets.Lookup(key)
		if err != nil {
			t.Fatal(err)
		}
		err = sel.Check(other)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.payload, err, tc.want)
		}
	}
}

func writeHostFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

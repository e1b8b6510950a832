package runtime_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	btfruntime "github.com/btfembed/btfembed/runtime"
)

// The execsnoop example as generated: its amd64 payload and object, whose
// optional count_exec needs a map type (cgroup storage) of Linux 6.2.
const (
	execsnoopPayload = "../examples/execsnoop/kernelbtf_amd64.btfembed"
	execsnoopObject  = "../examples/execsnoop/bpf_x86_bpfel.o"
)

func execsnoopSelection(t *testing.T, release string) *btfruntime.Selection {
	t.Helper()
	b, err := os.ReadFile(execsnoopPayload)
	if err != nil {
		t.Fatal(err)
	}
	assets, err := btfruntime.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := assets.Lookup(btfruntime.Key{Arch: "x86_64", Release: release, Distro: "debian", Version: "12"})
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func execsnoopSpec(t *testing.T) *ebpf.CollectionSpec {
	t.Helper()
	spec, err := ebpf.LoadCollectionSpec(execsnoopObject)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func names[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestPrune: on the 6.1 kernels the generator predicts count_exec fails
// (its map type is not in the kernel's enum bpf_map_type): Prune removes
// it and the map only it uses, and keeps handle_exec, its ring buffer and
// .bss, the map of a global variable;
// on 6.12 nothing is removed.
func TestPrune(t *testing.T) {
	for _, tt := range []struct {
		release     string
		removed     []string
		progs, maps []string
	}{
		{"6.1.0-47-amd64", []string{"count_exec"}, []string{"handle_exec"}, []string{".bss", "events"}},
		{"6.1.0-50-cloud-amd64", []string{"count_exec"}, []string{"handle_exec"}, []string{".bss", "events"}},
		{"6.12.118+deb12-amd64", nil, []string{"count_exec", "handle_exec"}, []string{".bss", "events", "execs_per_cgroup"}},
	} {
		t.Run(tt.release, func(t *testing.T) {
			sel := execsnoopSelection(t, tt.release)
			if !sel.Predicted {
				t.Fatal("an embedded selection says it predicts nothing")
			}
			spec := execsnoopSpec(t)
			removed, err := sel.Prune(spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range removed {
				got = append(got, p.Program)
				if p.Object != "bpf_x86_bpfel.o" || p.Verdict != btfruntime.VerdictFails || p.Kind != "map_type" || len(p.Reasons) == 0 {
					t.Errorf("removed %+v, want bpf_x86_bpfel.o's count_exec failing for its map type", p)
				}
			}
			if !slices.Equal(got, tt.removed) || !slices.Equal(names(spec.Programs), tt.progs) || !slices.Equal(names(spec.Maps), tt.maps) {
				t.Errorf("removed %v, left programs %v and maps %v; want %v, %v, %v",
					got, names(spec.Programs), names(spec.Maps), tt.removed, tt.progs, tt.maps)
			}
		})
	}
}

// TestPruneKernelBTF: on a kernel with BTF of its own whose release is
// embedded, the selection is the kernel's BTF with the entry's verdicts,
// and Prune removes count_exec as on the embedded entry; on one whose
// release is not embedded there is no prediction, and Prune leaves the
// collection as it is.
func TestPruneKernelBTF(t *testing.T) {
	b, err := os.ReadFile(execsnoopPayload)
	if err != nil {
		t.Fatal(err)
	}
	assets, err := btfruntime.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	const release = "6.1.0-47-amd64"
	vmlinux, err := os.ReadFile("../testdata/minbtf/debian/12/x86_64/" + release + ".btf")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/kernel/btf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sys/kernel/btf/vmlinux"), vmlinux, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		release   string
		predicted bool
		removed   []string
		progs     []string
	}{
		{release, true, []string{"count_exec"}, []string{"handle_exec"}},
		{"6.1.0-99-amd64", false, nil, []string{"count_exec", "handle_exec"}},
	} {
		t.Run(tt.release, func(t *testing.T) {
			sel, err := assets.Select(&btfruntime.SelectOptions{HostRoot: root, Arch: "x86_64", Release: tt.release})
			if err != nil {
				t.Fatal(err)
			}
			spec := execsnoopSpec(t)
			removed, err := sel.Prune(spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range removed {
				got = append(got, p.Program)
			}
			if sel.Source != btfruntime.SourceKernel || sel.Predicted != tt.predicted || !slices.Equal(got, tt.removed) || !slices.Equal(names(spec.Programs), tt.progs) {
				t.Fatalf("source %s, predicted %v %v, removed %v, programs left %v; want the kernel's, %v, %v, %v",
					sel.Source, sel.Predicted, sel.Predictions, got, names(spec.Programs), tt.predicted, tt.removed, tt.progs)
			}
		})
	}
}

// execsnoopObjects is the struct bpf2go generates for execsnoop, as
// loadBpfObjects fills it.
type execsnoopObjects struct {
	execsnoopPrograms
	execsnoopMaps
}

type execsnoopPrograms struct {
	CountExec  *ebpf.Program `ebpf:"count_exec"`
	HandleExec *ebpf.Program `ebpf:"handle_exec"`
}

type execsnoopMaps struct {
	Events         *ebpf.Map `ebpf:"events"`
	ExecsPerCgroup *ebpf.Map `ebpf:"execs_per_cgroup"`
}

// TestLoadAndAssign loads execsnoop for real on this machine with the
// 6.1 kernel's embedded BTF and verdicts: count_exec and its map are left
// out, their fields nil, and handle_exec and its ring buffer load, where
// ebpf.CollectionSpec.LoadAndAssign would fail on the missing program.
func TestLoadAndAssign(t *testing.T) {
	sel := execsnoopSelection(t, "6.1.0-47-amd64")
	opts := &ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: sel.Spec}}

	var plain execsnoopObjects
	spec := execsnoopSpec(t)
	if _, err := sel.Prune(spec, nil); err != nil {
		t.Fatal(err)
	}
	if err := spec.LoadAndAssign(&plain, opts); err == nil {
		plain.HandleExec.Close()
		plain.Events.Close()
		t.Fatal("cilium/ebpf's LoadAndAssign assigned a struct naming a removed program")
	}

	var objs execsnoopObjects
	removed, err := sel.LoadAndAssign(execsnoopSpec(t), &objs, opts, nil)
	if errors.Is(err, unix.EPERM) || errors.Is(err, ebpf.ErrNotSupported) {
		t.Skipf("bpf() is refused on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer objs.HandleExec.Close()
	defer objs.Events.Close()
	if len(removed) != 1 || removed[0].Program != "count_exec" {
		t.Errorf("removed %v, want count_exec", removed)
	}
	if objs.CountExec != nil || objs.ExecsPerCgroup != nil || objs.HandleExec == nil || objs.Events == nil {
		t.Errorf("assigned %+v, want handle_exec and events only", objs)
	}
	if info, err := objs.HandleExec.Info(); err != nil || info.Name != "handle_exec" {
		t.Errorf("handle_exec loaded as %v, %v", info, err)
	}
}

// On a Debian 12 6.1 kernel, execsnoop's optional count_exec will not
// load (its cgroup storage map is 6.2's): Prune takes it and its map out of
// the collection, and the rest loads.
func ExampleSelection_Prune() {
	b, err := os.ReadFile("../examples/execsnoop/kernelbtf_amd64.btfembed")
	if err != nil {
		panic(err)
	}
	assets, err := btfruntime.Open(b)
	if err != nil {
		panic(err)
	}
	sel, err := assets.Select(&btfruntime.SelectOptions{ForceEmbedded: true, Arch: "x86_64", Release: "6.1.0-47-amd64"})
	if err != nil {
		panic(err)
	}
	spec, err := ebpf.LoadCollectionSpec("../examples/execsnoop/bpf_x86_bpfel.o") // bpf2go's loadBpf()
	if err != nil {
		panic(err)
	}
	skipped, err := sel.Prune(spec, nil)
	if err != nil {
		panic(err)
	}
	for _, p := range skipped {
		fmt.Println("skipping", p.Program, "("+p.Kind+"):", p.Reasons[0])
	}
	fmt.Println("programs:", names(spec.Programs))
	fmt.Println("maps:", names(spec.Maps))
	// Output:
	// skipping count_exec (map_type): map execs_per_cgroup: map type CgroupStorage (32) is not in this kernel
	// programs: [handle_exec]
	// maps: [.bss events]
}

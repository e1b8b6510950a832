package runtime

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// TestPruneContents prunes cilium/ebpf's btf_map_init object, whose
// program array prog_array_init holds tail_1 and is used by tail_main, and
// whose map of maps outer_map_init holds inner_map, as if the kernel
// could not load one program or the other: the program array loses its
// entry for a removed tail_1 and stays for tail_main; without tail_main,
// nothing uses it and it goes; inner_map stays, named by outer_map_init.
func TestPruneContents(t *testing.T) {
	// CiliumTestdata is cilium/ebpf's btf/testdata; the loader's objects are one up.
	obj := filepath.Join(kerneltest.CiliumTestdata(t), "..", "..", "testdata", "btf_map_init-el.elf")
	for _, tt := range []struct {
		fails string
		progs []string
		maps  []string
	}{
		{"tail_1", []string{"tail_main"}, []string{"inner_map", "outer_map_init", "prog_array_init"}},
		{"tail_main", []string{"tail_1"}, []string{"inner_map", "outer_map_init"}},
	} {
		t.Run(tt.fails, func(t *testing.T) {
			e := payloadtest.Entries(t)[0]
			e.Unloadable = []encode.Prediction{{
				Object:  encode.Object{Name: "btf_map_init-el.elf", Programs: []string{"tail_1", "tail_main"}},
				Program: tt.fails, Verdict: payload.VerdictFails, Kind: "prog_type",
				Reasons: []string{"as if the kernel lacked it"},
			}}
			sel, err := open(t, payloadtest.Encode(t, []encode.Entry{e}, nil)).Lookup(e.Key)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := ebpf.LoadCollectionSpec(obj)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(spec.Maps["prog_array_init"].Contents); n != 1 {
				t.Fatalf("prog_array_init holds %d programs in the object", n)
			}
			removed, err := sel.Prune(spec, nil)
			if err != nil || len(removed) != 1 || removed[0].Program != tt.fails {
				t.Fatalf("removed %v, %v", removed, err)
			}
			progs := slices.Sorted(maps.Keys(spec.Programs))
			left := slices.Sorted(maps.Keys(spec.Maps))
			if !slices.Equal(progs, tt.progs) || !slices.Equal(left, tt.maps) {
				t.Errorf("left programs %v and maps %v, want %v and %v", progs, left, tt.progs, tt.maps)
			}
			if pa := spec.Maps["prog_array_init"]; pa != nil {
				for _, kv := range pa.Contents {
					if kv.Value == tt.fails {
						t.Errorf("prog_array_init still holds %s", tt.fails)
					}
				}
			}
			if outer := spec.Maps["outer_map_init"]; len(outer.Contents) != 1 {
				t.Errorf("outer_map_init holds %v", outer.Contents)
			}
		})
	}
}

// TestKernelBTFPredictsNothing: on a kernel with BTF of its own, the
// selection predicts nothing, even where the payload has verdicts for
// that very release; forced to the embedded entry, it has them.
func TestKernelBTFPredictsNothing(t *testing.T) {
	entries := payloadtest.WithVerdicts(payloadtest.Entries(t))
	i := slices.IndexFunc(entries, func(e encode.Entry) bool { return len(e.Unloadable) > 0 })
	e := entries[i]
	a := open(t, payloadtest.Encode(t, entries, nil))
	root := hostRoot(t, "etc/os-release", "ID=debian\nVERSION_ID=12\n")
	writeFile(t, filepath.Join(root, "sys/kernel/btf/vmlinux"), e.VMLinux)
	opts := &SelectOptions{HostRoot: root, Arch: e.Key.Arch, Release: e.Key.Release}
	sel, err := a.Select(opts)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Source != SourceKernel || sel.Predicted || sel.Predictions != nil {
		t.Errorf("kernel BTF: source %s, predicted %v, %v; want the kernel's and no prediction", sel.Source, sel.Predicted, sel.Predictions)
	}
	opts.ForceEmbedded = true
	if sel, err = a.Select(opts); err != nil {
		t.Fatal(err)
	}
	if sel.Source != SourceEmbedded || !sel.Predicted || len(sel.Predictions) != len(e.Unloadable) {
		t.Errorf("embedded: source %s, predicted %v, %v; want %d predictions", sel.Source, sel.Predicted, sel.Predictions, len(e.Unloadable))
	}
}

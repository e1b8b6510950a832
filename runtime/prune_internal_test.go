package runtime

import (
	"cmp"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
	"github.com/btfembed/btfembed/internal/vocab"
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
				Program: tt.fails, Verdict: vocab.Fails, Kind: "prog_type",
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

// TestKernelBTFPredictions: on a kernel with BTF of its own, the
// selection carries the verdicts of the embedded entry Select's matching
// rules pick for the running kernel (a release string names one build, so
// they were computed from this very BTF), and none where no entry is
// picked; forced to the embedded entry, it has the same verdicts.
func TestKernelBTFPredictions(t *testing.T) {
	entries := payloadtest.WithVerdicts(payloadtest.Entries(t))
	byRelease := map[string]encode.Entry{}
	for _, e := range entries {
		byRelease[e.Key.Release] = e
	}
	// 6.1.0-47-amd64 is also "shipped by ubuntu 22.04", with other BTF
	// and no verdicts.
	ubuntu := encode.Entry{Key: Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "ubuntu", Version: "22.04"},
		VMLinux: byRelease["6.12.118+deb12-amd64"].VMLinux}
	a := open(t, payloadtest.Encode(t, append(entries, ubuntu), nil))
	debian47, arm := byRelease["6.1.0-47-amd64"], byRelease["6.1.0-57-arm64"]
	for _, c := range []struct {
		name      string
		e         encode.Entry // whose BTF the kernel has
		release   string       // uname -r, if not e's
		osRelease string
		want      *encode.Entry // whose verdicts; nil: not predicted
	}{
		{name: "embedded once", e: arm, osRelease: "ID=debian\nVERSION_ID=12\n", want: &arm},
		{name: "embedded once, other distribution", e: arm, osRelease: "ID=centos\n", want: &arm},
		{name: "embedded once, no verdicts", e: byRelease["6.12.118+deb12-amd64"], want: ptr(byRelease["6.12.118+deb12-amd64"])},
		{name: "embedded twice, os-release picks", e: debian47, osRelease: "ID=debian\nVERSION_ID=12\n", want: &debian47},
		{name: "embedded twice, ID_LIKE picks", e: ubuntu, osRelease: "ID=linuxmint\nID_LIKE=ubuntu\n", want: &ubuntu},
		{name: "embedded twice, nothing picks", e: debian47, osRelease: "ID=fedora\n"},
		{name: "not embedded", e: debian47, release: "6.1.0-99-amd64", osRelease: "ID=debian\nVERSION_ID=12\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := hostRoot(t, "etc/os-release", c.osRelease)
			writeFile(t, filepath.Join(root, "sys/kernel/btf/vmlinux"), c.e.VMLinux)
			opts := &SelectOptions{HostRoot: root, Arch: c.e.Key.Arch, Release: cmp.Or(c.release, c.e.Key.Release)}
			sel, err := a.Select(opts)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Source != SourceKernel {
				t.Fatalf("selected %s BTF, want the kernel's", sel.Source)
			}
			if c.want == nil {
				if sel.Predicted || sel.Predictions != nil || sel.PredictionsFrom != (Key{}) {
					t.Errorf("predicted %v from %s: %v; want no prediction", sel.Predicted, sel.PredictionsFrom, sel.Predictions)
				}
				return
			}
			if !sel.Predicted || sel.PredictionsFrom != c.want.Key || !samePredictions(sel.Predictions, c.want.Unloadable) {
				t.Errorf("predicted %v from %s: %v; want %s's %v", sel.Predicted, sel.PredictionsFrom, sel.Predictions, c.want.Key, c.want.Unloadable)
			}
			opts.ForceEmbedded = true
			emb, err := a.Select(opts)
			if err != nil {
				t.Fatal(err)
			}
			if emb.Source != SourceEmbedded || !emb.Predicted || emb.PredictionsFrom != emb.Key || !slices.EqualFunc(emb.Predictions, sel.Predictions, samePrediction) {
				t.Errorf("embedded: %s BTF, predicted %v from %s: %v; want the kernel selection's %v", emb.Source, emb.Predicted, emb.PredictionsFrom, emb.Predictions, sel.Predictions)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// samePredictions says whether got are the predictions want encodes,
// which got lists by object and program.
func samePredictions(got []Prediction, want []encode.Prediction) bool {
	want = slices.SortedFunc(slices.Values(want), func(a, b encode.Prediction) int {
		return cmp.Or(cmp.Compare(a.Object.Name, b.Object.Name), cmp.Compare(a.Program, b.Program))
	})
	return slices.EqualFunc(got, want, func(g Prediction, w encode.Prediction) bool {
		return g.Object == w.Object.Name && g.Program == w.Program && g.Verdict == Verdict(w.Verdict) &&
			g.Kind == w.Kind && slices.Equal(g.Reasons, w.Reasons)
	})
}

func samePrediction(a, b Prediction) bool {
	return a.Object == b.Object && a.Program == b.Program && a.Verdict == b.Verdict && a.Kind == b.Kind && slices.Equal(a.Reasons, b.Reasons)
}

// TestPredictionsResolvedOnce: an entry's verdicts are resolved by its
// first Selection and shared by the next, each with its own slice.
func TestPredictionsResolvedOnce(t *testing.T) {
	a := open(t, payloadtest.Encode(t, payloadtest.WithVerdicts(payloadtest.Entries(t)), nil))
	opts := &SelectOptions{ForceEmbedded: true, Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian"}
	first, err := a.Select(opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Select(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Predictions) == 0 || !reflect.DeepEqual(first.Predictions, second.Predictions) {
		t.Fatalf("predictions %v, then %v", first.Predictions, second.Predictions)
	}
	if reflect.ValueOf(first.objects).UnsafePointer() != reflect.ValueOf(second.objects).UnsafePointer() {
		t.Error("the second Selection resolved the verdicts again")
	}
	first.Predictions[0].Program = "changed"
	if second.Predictions[0].Program == "changed" {
		t.Error("Selections share one slice of Predictions")
	}
}

package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/cilium/ebpf/btf"
)

func TestReadTestCorpus(t *testing.T) {
	kernels, errs := collect(t, []string{testCorpus}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(kernels) != len(testKernels) {
		t.Fatalf("read %d kernels, want %d", len(kernels), len(testKernels))
	}
	for i, tk := range testKernels {
		k := kernels[i]
		if k.Key != tk.key {
			t.Errorf("kernel %d: key %v, want %v", i, k.Key, tk.key)
			continue
		}
		if !bytes.Equal(k.VMLinux, hubBTF(t, tk.key)) {
			t.Errorf("%s: BTF differs from the archive's member", k.Key)
		}
		s, err := summarize(k)
		if err != nil {
			t.Fatal(err)
		}
		if s.Types != tk.types {
			t.Errorf("%s: %d types, want %d", k.Key, s.Types, tk.types)
		}
		if len(k.Modules) != 0 {
			t.Errorf("%s: %d modules, want none", k.Key, len(k.Modules))
		}
	}
}

func TestReadFilters(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string // releases
	}{
		{"arch alias", Options{Arch: []string{"aarch64"}}, []string{"6.1.0-57-arm64"}},
		{"arch", Options{Arch: []string{"x86_64"}}, []string{"6.1.0-47-amd64", "6.1.0-50-cloud-amd64", "6.12.118+deb12-amd64"}},
		{"release glob", Options{Release: "6.1.0-*"}, []string{"6.1.0-57-arm64", "6.1.0-47-amd64", "6.1.0-50-cloud-amd64"}},
		{"distro", Options{Distro: "ubuntu"}, nil},
		{"all and one worker", Options{Workers: 1}, []string{"6.1.0-57-arm64", "6.1.0-47-amd64", "6.1.0-50-cloud-amd64", "6.12.118+deb12-amd64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kernels, errs := collect(t, []string{testCorpus}, &tt.opts)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			var got []string
			for _, k := range kernels {
				got = append(got, k.Key.Release)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReadHolds counts the kernels Read has read while a loop body runs,
// once every goroutine but the body's waits: a kernel counts until its
// loop body returns, or with Options.Hold until its Release, which here
// comes in the next kernel's body.
func TestReadHolds(t *testing.T) {
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%v", hold), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var reads atomic.Int32
				opts := &Options{Workers: 2, Hold: hold, ReadEntry: func(e *Entry) (*Kernel, []error) {
					reads.Add(1)
					return e.Read()
				}}
				var prev *Kernel
				i := 0
				for k, err := range Read(t.Context(), []string{testCorpus}, opts) {
					if err != nil {
						t.Fatal(err)
					}
					synctest.Wait()
					want := min(len(testKernels), i+2) // this kernel's place and one more
					if hold && i > 0 {
						want = i + 1 // this kernel's and the one before it
					}
					if got := int(reads.Load()); got != want {
						t.Errorf("kernel %d: %d read, want %d", i, got, want)
					}
					if prev != nil {
						prev.Release()
					}
					prev = k
					i++
				}
				if i != len(testKernels) {
					t.Errorf("yielded %d kernels, want %d", i, len(testKernels))
				}
			})
		})
	}
}

func TestReadStopsEarly(t *testing.T) {
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%v", hold), func(t *testing.T) {
			var held []*Kernel
			for k, err := range Read(t.Context(), []string{testCorpus}, &Options{Workers: 2, Hold: hold}) {
				if err != nil {
					t.Fatal(err)
				}
				if k.Key != testKernels[0].key {
					t.Fatalf("first kernel %v, want %v", k.Key, testKernels[0].key)
				}
				held = append(held, k)
				break
			}
			if len(held) != 1 {
				t.Fatalf("yielded %d kernels before break", len(held))
			}
			// Released after the stream ended, as a worker may: it must
			// not block.
			held[0].Release()
			held[0].Release()
		})
	}
}

func TestReadCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var last error
	for k, err := range Read(ctx, []string{testCorpus}, nil) {
		if k != nil {
			t.Fatalf("kernel %v after cancel", k.Key)
		}
		last = err
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("last error %v, want context.Canceled", last)
	}
}

func TestReadModules(t *testing.T) {
	tests := []struct {
		name  string
		roots []string
	}{
		{"beside the kernel", []string{moduleCorpus(t)}},
		{"in another root", []string{testCorpus, testExtra}},
	}
	want := map[string][]string{
		"6.1.0-57-arm64":       {"nf_conntrack", "nvme", "virtio_net"},
		"6.12.118+deb12-amd64": {"nf_conntrack", "nvme", "virtio_net"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kernels, errs := collect(t, tt.roots, &Options{Release: "*-arm64"})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			more, errs := collect(t, tt.roots, &Options{Release: "6.12.*"})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			kernels = append(kernels, more...)
			if len(kernels) != len(want) {
				t.Fatalf("read %d kernels, want %d", len(kernels), len(want))
			}
			for _, k := range kernels {
				var names []string
				for _, m := range k.Modules {
					names = append(names, m.Name)
					src, _ := filepath.Glob(filepath.Join(extraModules(k.Key), m.Name+".ko*"))
					if len(src) != 1 {
						t.Fatalf("%s: no source for module %s", k.Key, m.Name)
					}
					ko := readTestModule(t, src[0])
					if want := objcopySection(t, ko, ".BTF"); !bytes.Equal(m.BTF, want) {
						t.Errorf("%s %s: BTF differs from the module's .BTF section", k.Key, m.Name)
					}
				}
				if !slices.Equal(names, want[k.Key.Release]) {
					t.Errorf("%s: modules %q, want %q", k.Key, names, want[k.Key.Release])
				}
			}
		})
	}

	t.Run("no modules", func(t *testing.T) {
		kernels, errs := collect(t, []string{testCorpus, testExtra}, &Options{NoModules: true, Release: "*-arm64"})
		if len(errs) > 0 || len(kernels) != 1 || len(kernels[0].Modules) != 0 {
			t.Fatalf("%d kernels, errors %v", len(kernels), errs)
		}
	})
}

// TestReadFullSpecs reads a corpus of a raw .btf file and a BTFHub
// archive with Options.FullSpecs: each kernel comes with cilium/ebpf's
// spec of exactly its VMLinux, which is what the reader reads without
// the option; the raw file's bytes are read once, into the spec's
// buffer, and the archive's are copied into it.
func TestReadFullSpecs(t *testing.T) {
	raw, archive := testKernels[1].key, testKernels[0].key
	root := t.TempDir()
	rawDir := filepath.Join(root, raw.Distro, raw.Version, raw.Arch)
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rawDir, raw.Release+".btf"), hubBTF(t, raw), 0o644); err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(archive.Distro, archive.Version, archive.Arch, archive.Release+".btf.tar.xz")
	data, err := os.ReadFile(filepath.Join(testCorpus, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, rel), data, 0o644); err != nil {
		t.Fatal(err)
	}

	plain, errs := collect(t, []string{root}, nil)
	if len(errs) > 0 || len(plain) != 2 {
		t.Fatalf("read %d kernels, errors %v", len(plain), errs)
	}
	full, errs := collect(t, []string{root}, &Options{FullSpecs: true})
	if len(errs) > 0 || len(full) != 2 {
		t.Fatalf("read %d kernels with FullSpecs, errors %v", len(full), errs)
	}
	for i, k := range full {
		if plain[i].FullSpec != nil {
			t.Errorf("%s: a spec without FullSpecs", k.Key)
		}
		if k.Key != plain[i].Key || !bytes.Equal(k.VMLinux, plain[i].VMLinux) {
			t.Fatalf("%s: other bytes with FullSpecs", k.Key)
		}
		if k.FullSpec == nil {
			t.Fatalf("%s: no spec", k.Key)
		}
		want, err := btf.LoadSpecFromReader(bytes.NewReader(k.VMLinux))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"task_struct", "sk_buff", "bpf_func_id"} {
			got, err := k.FullSpec.AnyTypeByName(name)
			if err != nil {
				t.Fatalf("%s: %s: %v", k.Key, name, err)
			}
			w, err := want.AnyTypeByName(name)
			if err != nil {
				t.Fatal(err)
			}
			gs, _ := btf.Sizeof(got)
			ws, _ := btf.Sizeof(w)
			if gs != ws || fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("%s: %s is %v (%d bytes) in FullSpec, %v (%d) in the plain load", k.Key, name, got, gs, w, ws)
			}
		}
	}
	// Whether a spec decodes from VMLinux itself, on specs that decoded
	// nothing yet: renaming mm_struct in VMLinux (which no caller may
	// do) renames it in the spec only if they share the bytes.
	fresh, errs := collect(t, []string{root}, &Options{FullSpecs: true})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, k := range fresh {
		id := k.spec.LookupEssentialNames([]string{"mm_struct"})["mm_struct"]
		at := bytes.Index(k.VMLinux, []byte("\x00mm_struct\x00"))
		if len(id) != 1 || at < 0 {
			t.Fatalf("%s: mm_struct %v at %d", k.Key, id, at)
		}
		k.VMLinux[at+1] = 'x'
		typ, err := k.FullSpec.TypeByID(btf.TypeID(id[0]))
		if err != nil {
			t.Fatal(err)
		}
		if shared := typ.TypeName() == "xm_struct"; shared != (k.Key == raw) {
			t.Errorf("%s: the spec shares VMLinux's bytes: %v, want %v (only the raw file's)", k.Key, shared, k.Key == raw)
		}
	}
}

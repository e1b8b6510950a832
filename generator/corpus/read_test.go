package corpus

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/btfembed/btfembed/internal/rawbtf"
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
		// The generator's parse gets the reader's back (see parseKernel).
		if again, err := rawbtf.Parse(k.VMLinux, nil); err != nil || again != k.spec {
			t.Errorf("%s: a second parse of the kernel's BTF gave %p, %v; want the reader's %p", k.Key, again, err, k.spec)
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

func TestReadStopsEarly(t *testing.T) {
	n := 0
	for k, err := range Read(t.Context(), []string{testCorpus}, &Options{Workers: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if k.Key != testKernels[0].key {
			t.Fatalf("first kernel %v, want %v", k.Key, testKernels[0].key)
		}
		n++
		break
	}
	if n != 1 {
		t.Fatalf("yielded %d kernels before break", n)
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

package coremin

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// corpusModules is where testdata keeps kernel modules with split BTF
// for the testdata kernels (see testdata/corpus-extra/README.md).
const corpusModules = "../../testdata/corpus-extra/debian/12"

// moduleBTF returns the .BTF section of a kernel module, .ko or .ko.xz.
func moduleBTF(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if strings.HasSuffix(path, ".xz") {
		zr, err := xz.NewReader(bytes.NewReader(data), 0)
		if err != nil {
			tb.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			tb.Fatal(err)
		}
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	sec := f.Section(".BTF")
	if sec == nil {
		tb.Fatalf("%s: no .BTF", path)
	}
	b, err := sec.Data()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestOracleModules minimizes vmlinux and nf_conntrack's split BTF
// together for all test objects and checks cilium/ebpf relocates the
// same against [vmlinux, module] full and minimized.
func TestOracleModules(t *testing.T) {
	cases := []struct{ kernel, module string }{
		{"6.12.118+deb12-amd64", "x86_64/6.12.118+deb12-amd64.modules/nf_conntrack.ko.xz"},
		{"6.1.0-57-arm64", "arm64/6.1.0-57-arm64.modules/nf_conntrack.ko.xz"},
	}
	objPaths := testObjects(t)
	for _, tc := range cases {
		t.Run(tc.kernel, func(t *testing.T) {
			modPath := filepath.Join(corpusModules, tc.module)
			var k kernel
			for _, kk := range kernels(t) {
				if kk.name == tc.kernel {
					k = kk
				}
			}
			if k.raw == nil {
				t.Fatalf("kernel %s not in testdata", tc.kernel)
			}
			raw, full := kernelSpecs(t, k)
			modData := moduleBTF(t, modPath)
			rawMod, err := rawbtf.Parse(modData, raw)
			if err != nil {
				t.Fatal(err)
			}
			fullMod, err := btf.LoadSplitSpecFromReader(bytes.NewReader(modData), full)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := Load(objPaths...)
			if err != nil {
				t.Fatal(err)
			}
			res, err := match(objs, []*rawbtf.Spec{raw, rawMod})
			if err != nil {
				t.Fatal(err)
			}
			resolvedInModule := 0
			for _, o := range res.Sites() {
				if o.Status == Resolved && o.Candidate.Target == 1 {
					resolvedInModule++
				}
			}
			if resolvedInModule == 0 {
				t.Error("no relocation resolved against a module type")
			}
			vmlinux, modules, err := Minimize(res)
			if err != nil {
				t.Fatal(err)
			}
			minV, err := btf.LoadSpecFromReader(bytes.NewReader(vmlinux))
			if err != nil {
				t.Fatal(err)
			}
			minM, err := btf.LoadSplitSpecFromReader(bytes.NewReader(modules[0]), minV)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := Verify(loadObjects(t, objPaths), []*btf.Spec{full, fullMod}, []*btf.Spec{minV, minM})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				t.Error(m)
			}
			bpftoolLoads(t, vmlinux, nil)
			bpftoolLoads(t, modules[0], vmlinux)
			t.Logf("%d relocations resolved in the module; minimized: vmlinux %d bytes, module %d bytes", resolvedInModule, len(vmlinux), len(modules[0]))
		})
	}
}

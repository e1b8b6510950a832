package generator

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kerneltest"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

// TestGenerateModules is the module end to end: conntrack-el.o reads
// nf_conntrack's own types (struct nf_conn_acct, nf_conn_tstamp, ...) and
// vmlinux types. For each testdata kernel that has the module, the
// embedded assets (minimized vmlinux plus the distilled module relocated
// onto it by the runtime) must give cilium/ebpf the fixups that the full
// vmlinux and module BTF give; on the kernels without it, the module's
// relocations do not resolve.
func TestGenerateModules(t *testing.T) {
	obj := filepath.Join(kerneltest.Dir(), "objects", "conntrack-el.o")
	roots := []string{filepath.Join(kerneltest.Dir(), "btfhub"), filepath.Join(kerneltest.Dir(), "corpus-extra")}
	res, err := Generate(context.Background(), &Args{Objects: []string{obj}, Corpus: roots})
	if err != nil {
		t.Fatal(err)
	}
	assets, err := btfruntime.Open(payloadOf(t, res))
	if err != nil {
		t.Fatal(err)
	}

	withModule := 0
	for k, err := range corpus.Read(context.Background(), roots, nil) {
		if err != nil {
			t.Fatal(err)
		}
		var kr *KernelReport
		for i := range res.Report.Kernels {
			if res.Report.Kernels[i].Release == k.Key.Release {
				kr = &res.Report.Kernels[i]
			}
		}
		acctResolved := true
		for _, u := range kr.Unresolved {
			if u.Type == "nf_conn_acct" {
				acctResolved = false
			}
		}

		var conntrack *corpus.Module
		for i := range k.Modules {
			if k.Modules[i].Name == "nf_conntrack" {
				conntrack = &k.Modules[i]
			}
		}
		if conntrack == nil {
			if len(kr.Modules) != 0 || acctResolved {
				t.Errorf("%s has no nf_conntrack BTF, yet embeds modules %v or resolves nf_conn_acct", k.Key, kr.Modules)
			}
			continue
		}
		withModule++
		if len(kr.Modules) != 1 || kr.Modules[0].Name != "nf_conntrack" || !acctResolved {
			t.Errorf("%s: embedded modules %v, nf_conn_acct resolved %v; want nf_conntrack, true", k.Key, kr.Modules, acctResolved)
		}

		full, err := btf.LoadSpecFromReader(bytes.NewReader(k.VMLinux))
		if err != nil {
			t.Fatal(err)
		}
		fullMod, err := btf.LoadSplitSpecFromReader(bytes.NewReader(conntrack.BTF), full)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := assets.Lookup(btfruntime.Key{Arch: k.Key.Arch, Release: k.Key.Release, Distro: k.Key.Distro, Version: k.Key.Version})
		if err != nil {
			t.Fatal(err)
		}
		minMod := sel.Modules["nf_conntrack"]
		if minMod == nil {
			t.Fatalf("%s: runtime gives no nf_conntrack spec", k.Key)
		}
		loaded, err := coremin.Load([]string{obj}...)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := coremin.Verify(loaded, []*btf.Spec{full, fullMod}, []*btf.Spec{sel.Spec, minMod})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			t.Errorf("%s: %s", k.Key, m)
		}
	}
	if withModule != 2 {
		t.Fatalf("%d testdata kernels have nf_conntrack BTF, want 2 (arm64 6.1, x86_64 6.12)", withModule)
	}
}

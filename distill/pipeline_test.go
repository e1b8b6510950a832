package distill_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestMinimizedModule runs the generator's hand-off: coremin minimizes
// vmlinux and nf_conntrack together for an object that reads module types,
// Distill separates the minimized module from the minimized vmlinux, and
// Relocate moves it onto the minimized vmlinux (the embedded case) and onto
// the full vmlinux (a kernel with its own BTF), where cilium/ebpf must read
// the same module types.
func TestMinimizedModule(t *testing.T) {
	objs, err := coremin.Load("../testdata/objects/conntrack-el.o")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range committedModules(t) {
		if m.name != "nf_conntrack" {
			continue
		}
		t.Run(m.release, func(t *testing.T) {
			k := kernelFor(t, m.release)
			vmlinux, err := coremin.NewTarget(k.raw.Raw(), nil)
			if err != nil {
				t.Fatal(err)
			}
			module, err := coremin.NewTarget(m.btf, vmlinux)
			if err != nil {
				t.Fatal(err)
			}
			res, err := coremin.Match(objs, []*coremin.Target{vmlinux, module})
			if err != nil {
				t.Fatal(err)
			}
			vm, mods, err := coremin.Minimize(res)
			if err != nil {
				t.Fatal(err)
			}
			minVM, err := rawbtf.Parse(vm, nil)
			if err != nil {
				t.Fatal(err)
			}
			minBase, err := distill.NewBase(vm)
			if err != nil {
				t.Fatal(err)
			}
			db, ds, err := distill.Distill(mods[0], minBase)
			if err != nil {
				t.Fatal(err)
			}
			dist, err := rawbtf.Parse(db, nil)
			if err != nil {
				t.Fatal(err)
			}
			split := parseSplit(t, ds, dist)

			minSpec, err := btf.LoadSpecFromReader(bytes.NewReader(vm))
			if err != nil {
				t.Fatal(err)
			}
			orig, err := btf.LoadSplitSpecFromReader(bytes.NewReader(mods[0]), minSpec)
			if err != nil {
				t.Fatal(err)
			}
			d := distilled{name: "minimized " + m.name, split: split, orig: orig, origFirst: minVM.NextID(), origBase: minSpec}
			for _, target := range []*kernel{{name: "minimized vmlinux", raw: minVM, spec: minSpec}, k} {
				if got := outcome(t, d, target, target.name); !strings.HasSuffix(got, ": ok\n") {
					t.Errorf("%s", got)
				}
			}
		})
	}
}

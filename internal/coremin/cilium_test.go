package coremin

import (
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestCiliumRelocsRead minimizes cilium/ebpf's relocs_read test object for
// the target BTF its own tests relocate against.
func TestCiliumRelocsRead(t *testing.T) {
	testdata := kerneltest.CiliumTestdata(t)
	objs, err := Load(filepath.Join(testdata, "relocs_read-el.elf"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(filepath.Join(testdata, "relocs_read_tgt-el.elf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kernel, err := f.Section(".BTF").Data()
	if err != nil {
		t.Fatal(err)
	}
	target, err := rawbtf.Parse(kernel, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := match(objs, []*rawbtf.Spec{target})
	if err != nil {
		t.Fatal(err)
	}
	counts := make(map[Status]int)
	for _, o := range res.Sites() {
		counts[o.Status]++
	}
	if n := len(objs[0].Sites); n != 47 || counts[Resolved] != 44 || counts[Missing] != 3 {
		t.Errorf("%d relocations: %d resolved, %d missing; want 47: 44 resolved, 3 missing", n, counts[Resolved], counts[Missing])
	}
	min, _, err := Minimize(res)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := rawbtf.Parse(min, nil)
	if err != nil {
		t.Fatal(err)
	}
	if types := spec.NextID() - 1; types != 11 || len(min) != 367 {
		t.Errorf("minimized BTF: %d types, %d bytes; want 11 types, 367 bytes", types, len(min))
	}
}

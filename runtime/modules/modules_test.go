package modules

import (
	"testing"

	"github.com/btfembed/btfembed/internal/btfrelocate"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/modulehook"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestRegisters: linking the package hands the runtime a relocation that
// gives btfrelocate's bytes, on cilium/ebpf's btf_testmod and the vmlinux
// it was built against; the runtime's TestModules loads the result.
func TestRegisters(t *testing.T) {
	if modulehook.Relocate == nil {
		t.Fatal("modulehook.Relocate is nil with runtime/modules linked")
	}
	m := kerneltest.CiliumTestmod(t)
	vmlinux, err := rawbtf.Parse(m.VMLinux, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := modulehook.Relocate(m.Split, m.Base, vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	base, err := btfrelocate.NewBase(m.VMLinux)
	if err != nil {
		t.Fatal(err)
	}
	want, err := btfrelocate.Relocate(m.Split, m.Base, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("relocated module: %d bytes, btfrelocate.Relocate gives %d", len(got), len(want))
	}
}

package corereloc_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/corereloc"
)

// Minimize the BTF of one kernel for an object's CO-RE relocations, as
// bpftool gen min_core_btf does, and check the result.
func Example() {
	objs, err := corereloc.Load("../testdata/objects/fields-el.o")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The kernel's BTF is raw BTF such as /sys/kernel/btf/vmlinux; here a
	// Debian kernel's, already minimized for another agent.
	raw, err := os.ReadFile("../testdata/minbtf/debian/12/x86_64/6.1.0-47-amd64.btf")
	if err != nil {
		fmt.Println(err)
		return
	}
	min, err := corereloc.Minimize(objs, raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	full, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		fmt.Println(err)
		return
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(min.VMLinux))
	if err != nil {
		fmt.Println(err)
		return
	}
	types := 0
	for range spec.All() {
		types++
	}
	fmt.Printf("%d relocations, %d unresolved\n", objs[0].Relocations(), len(min.Unresolved))
	fmt.Printf("minimized BTF: %d types, %d bytes\n", types, len(min.VMLinux))
	fmt.Println("verified:", corereloc.Verify(objs, []*btf.Spec{full}, []*btf.Spec{spec}) == nil)
	// Output:
	// 25 relocations, 0 unresolved
	// minimized BTF: 13 types, 414 bytes
	// verified: true
}

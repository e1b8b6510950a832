package corereloc_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/corereloc"
)

// Minimize the BTF of one kernel for an object's CO-RE relocations, as
// bpftool gen min_core_btf does.
func Example() {
	objs, err := corereloc.Load("../testdata/objects/fields-el.o")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The target is raw kernel BTF such as /sys/kernel/btf/vmlinux; here a
	// Debian kernel's, already minimized for another agent.
	raw, err := os.ReadFile("../testdata/minbtf/debian/12/x86_64/6.1.0-47-amd64.btf")
	if err != nil {
		fmt.Println(err)
		return
	}
	vmlinux, err := corereloc.NewTarget(raw, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := corereloc.Match(objs, []*corereloc.Target{vmlinux})
	if err != nil {
		fmt.Println(err)
		return
	}
	counts := make(map[corereloc.Status]int)
	for _, o := range res.Sites() {
		counts[o.Status]++
	}
	min, _, err := corereloc.Minimize(res)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(min))
	if err != nil {
		fmt.Println(err)
		return
	}
	types := 0
	for range spec.All() {
		types++
	}
	fmt.Printf("%d relocations: %d resolved, %d missing\n", len(objs[0].Sites), counts[corereloc.Resolved], counts[corereloc.Missing])
	fmt.Printf("minimized BTF: %d types, %d bytes\n", types, len(min))
	// Output:
	// 25 relocations: 9 resolved, 16 missing
	// minimized BTF: 13 types, 414 bytes
}

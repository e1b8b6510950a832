package corereloc_test

import (
	"debug/elf"
	"fmt"
	"path/filepath"

	"github.com/btfembed/btfembed/corereloc"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Minimize cilium/ebpf's relocs_read test object for its target BTF.
func Example() {
	testdata, err := kerneltest.CiliumTestdataDir()
	if err != nil {
		fmt.Println(err)
		return
	}
	objs, err := corereloc.Load(filepath.Join(testdata, "relocs_read-el.elf"))
	if err != nil {
		fmt.Println(err)
		return
	}
	// The target is a raw BTF blob such as /sys/kernel/btf/vmlinux; here
	// the .BTF of the object cilium/ebpf's tests relocate against.
	f, err := elf.Open(filepath.Join(testdata, "relocs_read_tgt-el.elf"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	kernel, err := f.Section(".BTF").Data()
	if err != nil {
		fmt.Println(err)
		return
	}
	target, err := rawbtf.Parse(kernel, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := corereloc.Match(objs, []*rawbtf.Spec{target})
	if err != nil {
		fmt.Println(err)
		return
	}
	counts := make(map[corereloc.Status]int)
	for _, outcomes := range res.Outcomes {
		for _, o := range outcomes {
			counts[o.Status]++
		}
	}
	min, _, err := corereloc.Minimize(res)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec, _ := rawbtf.Parse(min, nil)
	fmt.Printf("%d relocations: %d resolved, %d missing\n", len(objs[0].Relocations), counts[corereloc.Resolved], counts[corereloc.Missing])
	fmt.Printf("minimized BTF: %d types, %d bytes\n", spec.NextID()-1, len(min))
	// Output:
	// 47 relocations: 44 resolved, 3 missing
	// minimized BTF: 11 types, 367 bytes
}

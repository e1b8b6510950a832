package runtime_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf/btf"

	btfruntime "github.com/btfembed/btfembed/runtime"
)

// payload is what btfembed generated for the execsnoop example, for the
// four testdata kernels; an agent embeds it with //go:embed.
func payload() []byte {
	b, err := os.ReadFile("../examples/execsnoop/kernelbtf.btfembed")
	if err != nil {
		panic(err)
	}
	return b
}

// The generator writes the payload; at run time Open reads its
// index and Kernels lists what it holds.
func ExampleOpen() {
	assets, err := btfruntime.Open(payload())
	if err != nil {
		panic(err)
	}
	for _, k := range assets.Kernels() {
		fmt.Println(k)
	}
	// Output:
	// arm64/6.1.0-57-arm64 (debian 12)
	// x86_64/6.1.0-47-amd64 (debian 12)
	// x86_64/6.1.0-50-cloud-amd64 (debian 12)
	// x86_64/6.12.118+deb12-amd64 (debian 12)
}

// Select picks BTF for the running kernel. Here the kernel is described
// by overrides (uname -m may say aarch64) and the embedded BTF is forced,
// as on a kernel without /sys/kernel/btf/vmlinux.
func ExampleAssets_Select() {
	assets, err := btfruntime.Open(payload())
	if err != nil {
		panic(err)
	}
	sel, err := assets.Select(&btfruntime.SelectOptions{
		ForceEmbedded: true,
		Arch:          "aarch64",
		Release:       "6.1.0-57-arm64",
		Distro:        "debian",
		Version:       "12",
	})
	if err != nil {
		panic(err)
	}
	var task *btf.Struct
	if err := sel.Spec.TypeByName("task_struct", &task); err != nil {
		panic(err)
	}
	fmt.Println(sel.Source, sel.Key, task.Size > 0)

	_, err = assets.Select(&btfruntime.SelectOptions{ForceEmbedded: true, Arch: "x86_64", Release: "5.15.0-1-generic", Distro: "ubuntu", Version: "22.04"})
	fmt.Println(errors.Is(err, btfruntime.ErrKernelNotSupported))
	fmt.Println(err)
	// Output:
	// embedded arm64/6.1.0-57-arm64 (debian 12) true
	// true
	// kernel not supported: x86_64/5.15.0-1-generic (ubuntu 22.04): none of the 4 embedded kernels matches
}

// CollectionOptions gives options for ebpf.NewCollectionWithOptions with
// the selected BTF as the CO-RE target.
func ExampleAssets_CollectionOptions() {
	assets, err := btfruntime.Open(payload())
	if err != nil {
		panic(err)
	}
	opts, sel, err := assets.CollectionOptions(&btfruntime.SelectOptions{
		ForceEmbedded: true, Arch: "x86_64", Release: "6.1.0-47-amd64",
	})
	if err != nil {
		panic(err)
	}
	// Then: coll, err := ebpf.NewCollectionWithOptions(spec, *opts)
	fmt.Println(sel.Key, opts.Programs.KernelTypes == sel.Spec)
	// Output:
	// x86_64/6.1.0-47-amd64 (debian 12) true
}

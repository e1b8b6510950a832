package runtime_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/payload/encode"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

// payload builds what btfembed's generator embeds, from two of the
// minimized testdata kernels.
func payload() []byte {
	var entries []encode.Entry
	for _, k := range []btfruntime.Key{
		{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian", Version: "12"},
		{Arch: "arm64", Release: "6.1.0-57-arm64", Distro: "debian", Version: "12"},
	} {
		raw, err := os.ReadFile("../testdata/minbtf/debian/12/" + k.Arch + "/" + k.Release + ".btf")
		if err != nil {
			panic(err)
		}
		entries = append(entries, encode.Entry{Key: k, VMLinux: raw})
	}
	var buf bytes.Buffer
	if err := encode.Write(&buf, &encode.Payload{Entries: entries}, nil); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// The generator writes the payload; at run time Open reads its
// index and Kernels lists what it holds.
func ExampleOpen() {
	assets, err := btfruntime.Open(payload())
	if err != nil {
		panic(err)
	}
	keys, err := assets.Kernels()
	if err != nil {
		panic(err)
	}
	for _, k := range keys {
		fmt.Println(k)
	}
	// Output:
	// arm64/6.1.0-57-arm64 (debian 12)
	// x86_64/6.1.0-47-amd64 (debian 12)
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

	// A kernel the payload lacks, without BTF of its own: a host file
	// system, as an agent in a container sees the host's under HostRoot,
	// with no /sys/kernel/btf. The error says how to embed the kernel.
	host, err := os.MkdirTemp("", "host")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(host)
	_, err = assets.Select(&btfruntime.SelectOptions{HostRoot: host, Arch: "x86_64", Release: "5.15.0-1-generic", Distro: "ubuntu", Version: "22.04"})
	fmt.Println(errors.Is(err, btfruntime.ErrKernelNotSupported))
	fmt.Println(err)
	// Output:
	// embedded arm64/6.1.0-57-arm64 (debian 12) true
	// true
	// kernel not supported: x86_64/5.15.0-1-generic (ubuntu 22.04): none of the 2 embedded kernels matches; to embed it, import its BTF into the agent's corpus (CORPUS below, the -corpus of its go:generate line) and run go generate again: this kernel has no BTF of its own (no usable /sys/kernel/btf/vmlinux, and none in its image), so pahole makes it from the kernel's debug info: download its debug package, linux-image-unsigned-5.15.0-1-generic-dbgsym, and run `go tool btfembed corpus import -o CORPUS linux-image-unsigned-5.15.0-1-generic-dbgsym_*.ddeb` in the agent's module
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

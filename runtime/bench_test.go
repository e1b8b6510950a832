package runtime

import (
	"fmt"
	"os"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// BenchmarkSelectEmbedded is what an agent pays at start-up on a kernel
// without BTF: open the payload, select an entry (forced embedded, key
// given), decompress and parse it, and look up one type. The dictionary
// bound trades payload size (reported) for this cost.
func BenchmarkSelectEmbedded(b *testing.B) {
	entries := payloadtest.Entries(b)
	key := entries[len(entries)-1].Key
	opts := &SelectOptions{ForceEmbedded: true, Arch: key.Arch, Release: key.Release, Distro: key.Distro, Version: key.Version}
	for _, maxDict := range []int{-1, 16 << 10, 64 << 10} {
		payload := payloadtest.Encode(b, entries, &encode.Options{MaxDictSize: maxDict})
		b.Run(fmt.Sprintf("maxdict=%d", maxDict), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a, err := Open(payload)
				if err != nil {
					b.Fatal(err)
				}
				sel, err := a.Select(opts)
				if err != nil {
					b.Fatal(err)
				}
				var task *btf.Struct
				if err := sel.Spec.TypeByName("task_struct", &task); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(payload)), "payload-bytes")
		})
	}
}

// BenchmarkLoadKernelSpec is the alternative on a kernel with BTF: parse
// /sys/kernel/btf/vmlinux and look up the same type.
func BenchmarkLoadKernelSpec(b *testing.B) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		b.Skipf("no kernel BTF: %v", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		spec, err := btf.LoadKernelSpec()
		if err != nil {
			b.Fatal(err)
		}
		var task *btf.Struct
		if err := spec.TypeByName("task_struct", &task); err != nil {
			b.Fatal(err)
		}
	}
}

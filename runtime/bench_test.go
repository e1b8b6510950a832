package runtime

import (
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// BenchmarkSelectEmbedded is what an agent pays at start-up on a kernel
// without BTF: open the payload, select an entry (forced embedded, key
// given), decompress and parse it, and look up one type. The dictionary
// bound trades payload size (reported) for this cost.
func BenchmarkSelectEmbedded(b *testing.B) {
	entries := testEntries(b)
	key := entries[len(entries)-1].Key
	opts := &SelectOptions{ForceEmbedded: true, Arch: key.Arch, Release: key.Release, Distro: key.Distro, Version: key.Version}
	for _, maxDict := range []int{-1, 16 << 10, 64 << 10} {
		payload := encode(b, entries, &EncodeOptions{MaxDictSize: maxDict})
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

// BenchmarkPayloadSize reports the payload size for the -minbtf kernels
// under several encodings next to the sum of the raw files, a solid
// `tar | xz -9` of them and BTFHub-style per-kernel .btf.tar.xz files
// (when xz is installed). It measures bytes, not time.
func BenchmarkPayloadSize(b *testing.B) {
	entries := testEntries(b)
	raw := 0
	var single [][]Entry
	for _, e := range entries {
		raw += len(e.VMLinux)
		single = append(single, []Entry{e})
	}
	metrics := map[string]int{"kernels": len(entries), "raw-bytes": raw}
	if solid, ok := tarXZ(b, [][]Entry{entries}); ok {
		metrics["tar-xz9-bytes"] = solid
		metrics["per-kernel-tar-xz9-bytes"], _ = tarXZ(b, single)
	}
	for name, opts := range map[string]*EncodeOptions{
		"zstd-per-blob":        {MaxDictSize: -1, noPack: true},
		"zstd-dict":            {noPack: true},
		"packed-zstd-per-blob": {MaxDictSize: -1},
		"payload":              nil,
	} {
		metrics[name+"-bytes"] = len(encode(b, entries, opts))
	}
	for b.Loop() {
	}
	for unit, v := range metrics {
		b.ReportMetric(float64(v), unit)
	}
}

// BenchmarkEncode is the generator's last step for the -minbtf kernels.
func BenchmarkEncode(b *testing.B) {
	entries := testEntries(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Encode(io.Discard, entries, nil); err != nil {
			b.Fatal(err)
		}
	}
}

package runtime

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
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
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	for _, e := range entries {
		raw += len(e.VMLinux)
		name := e.Key.Distro + "/" + e.Key.Version + "/" + e.Key.Arch + "/" + e.Key.Release + ".btf"
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(e.VMLinux))}); err != nil {
			b.Fatal(err)
		}
		tw.Write(e.VMLinux)
	}
	tw.Close()
	metrics := map[string]int{"kernels": len(entries), "raw-bytes": raw}
	if xz, err := exec.LookPath("xz"); err == nil {
		cmd := exec.Command(xz, "-9", "-c")
		cmd.Stdin = &tarball
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		metrics["tar-xz9-bytes"] = len(out)
		perKernel := 0
		for _, e := range entries {
			var one bytes.Buffer
			tw := tar.NewWriter(&one)
			tw.WriteHeader(&tar.Header{Name: e.Key.Release + ".btf", Mode: 0o644, Size: int64(len(e.VMLinux))})
			tw.Write(e.VMLinux)
			tw.Close()
			cmd := exec.Command(xz, "-9", "-c")
			cmd.Stdin = &one
			out, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			perKernel += len(out)
		}
		metrics["per-kernel-tar-xz9-bytes"] = perKernel
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

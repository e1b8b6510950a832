package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
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

// BenchmarkSelectKernel is what an agent pays at start-up on a kernel
// with BTF of its own (Open, then Select), for a release the payload
// embeds with verdicts and for one it does not: the difference is what
// looking up the embedded entry's predictions costs. Under a HostRoot the
// kernel's BTF (6.1.0-47-amd64's, 5 MB) is read and parsed on every call;
// at / cilium/ebpf parses the running kernel's once and caches it, which
// leaves the runtime's own work.
func BenchmarkSelectKernel(b *testing.B) {
	entries := payloadtest.WithVerdicts(payloadtest.Entries(b))
	k := kerneltest.ByName(b, "debian/12/x86_64/6.1.0-47-amd64")
	root := b.TempDir()
	for _, f := range []struct {
		path string
		b    []byte
	}{{"sys/kernel/btf/vmlinux", k.BTF}, {"etc/os-release", []byte("ID=debian\nVERSION_ID=12\n")}} {
		path := filepath.Join(root, f.path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, f.b, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		b.Fatal(err)
	}
	// The running kernel's release, embedded with the verdicts of
	// 6.1.0-47-amd64's entry.
	running := entries[slices.IndexFunc(entries, func(e encode.Entry) bool { return e.Key.Release == k.Release })]
	running.Key = Key{Arch: unix.ByteSliceToString(u.Machine[:]), Release: unix.ByteSliceToString(u.Release[:]), Distro: "debian", Version: "12"}
	running.Key.Arch, _ = kernelkey.NormalizeArch(running.Key.Arch)
	payload := payloadtest.Encode(b, append(entries, running), nil)

	for _, c := range []struct {
		name string
		opts *SelectOptions
	}{
		{"hostroot/embedded", &SelectOptions{HostRoot: root, Arch: "x86_64", Release: k.Release}},
		{"hostroot/not-embedded", &SelectOptions{HostRoot: root, Arch: "x86_64", Release: "6.1.0-99-amd64"}},
		{"running/embedded", &SelectOptions{Distro: "debian", Version: "12"}},
		{"running/not-embedded", &SelectOptions{Release: "6.1.0-99-amd64", Distro: "debian", Version: "12"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.opts.HostRoot == "" {
				if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
					b.Skipf("no kernel BTF: %v", err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				a, err := Open(payload)
				if err != nil {
					b.Fatal(err)
				}
				sel, err := a.Select(c.opts)
				if err != nil {
					b.Fatal(err)
				}
				if sel.Source != SourceKernel {
					b.Fatalf("selected %s BTF", sel.Source)
				}
			}
		})
	}
}

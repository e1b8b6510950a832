package runtime

import (
	"bytes"
	"flag"
	"fmt"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload/encode"
)

// minBTFDir holds minimized BTF of several kernels, laid out as
// <distro>/<version>/<arch>/<release>.btf. The -minbtf flag points tests
// and benchmarks at another tree of that layout.
var minBTFDir = flag.String("minbtf", kerneltest.MinBTFDir(), "directory of minimized BTF, <distro>/<version>/<arch>/<release>.btf")

// testEntries are the kernels under minBTFDir, as the generator would
// embed them.
func testEntries(tb testing.TB) []encode.Entry {
	tb.Helper()
	var entries []encode.Entry
	for _, k := range kerneltest.MinBTF(tb, *minBTFDir) {
		entries = append(entries, encode.Entry{Key: k.Key, VMLinux: k.BTF})
	}
	return entries
}

// moduleEntry embeds cilium/ebpf's pahole-made btf_testmod. With
// withBase, the module keeps its distilled base and the entry's vmlinux is
// the real vmlinux it was built against, so selecting the entry relocates
// the module for real; without, its distilled base stands in for vmlinux
// and the split BTF is read over it directly.
func moduleEntry(tb testing.TB, withBase bool) encode.Entry {
	tb.Helper()
	m := kerneltest.CiliumTestmod(tb)
	e := encode.Entry{Key: Key{Arch: "x86_64", Release: "testmod"}, VMLinux: m.Base,
		Modules: []encode.Module{{Name: "bpf_testmod", Split: m.Split}}}
	if withBase {
		e.VMLinux, e.Modules[0].Base = m.VMLinux, m.Base
	}
	return e
}

// manyEntries repeats the testdata entries under n distinct releases.
func manyEntries(tb testing.TB, n int) []encode.Entry {
	base := testEntries(tb)
	entries := make([]encode.Entry, n)
	for i := range entries {
		entries[i] = base[i%len(base)]
		entries[i].Key.Release = fmt.Sprintf("%s.%04d", entries[i].Key.Release, i)
	}
	return entries
}

func encodePayload(tb testing.TB, entries []encode.Entry, opts *encode.Options) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := encode.Write(&buf, entries, opts); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func open(tb testing.TB, payload []byte) *Assets {
	tb.Helper()
	a, err := Open(payload)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

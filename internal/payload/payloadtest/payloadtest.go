package payloadtest

import (
	"bytes"
	"flag"
	"fmt"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload/encode"
)

// minBTFDir holds minimized BTF of several kernels, laid out as
// <distro>/<version>/<arch>/<release>.btf.
var minBTFDir = flag.String("minbtf", kerneltest.MinBTFDir(), "directory of minimized BTF, <distro>/<version>/<arch>/<release>.btf")

// Entries are the kernels under -minbtf (testdata/minbtf by default), as
// the generator would embed them.
func Entries(tb testing.TB) []encode.Entry {
	tb.Helper()
	var entries []encode.Entry
	for _, k := range kerneltest.MinBTF(tb, *minBTFDir) {
		entries = append(entries, encode.Entry{Key: k.Key, VMLinux: k.BTF})
	}
	return entries
}

// Many repeats Entries under n distinct releases, for payloads of more
// kernels, and more index blocks, than the testdata has.
func Many(tb testing.TB, n int) []encode.Entry {
	tb.Helper()
	base := Entries(tb)
	entries := make([]encode.Entry, n)
	for i := range entries {
		entries[i] = base[i%len(base)]
		entries[i].Key.Release = fmt.Sprintf("%s.%04d", entries[i].Key.Release, i)
	}
	return entries
}

// Encode writes entries as a payload with opts; an error fails tb.
func Encode(tb testing.TB, entries []encode.Entry, opts *encode.Options) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := encode.Write(&buf, entries, opts); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

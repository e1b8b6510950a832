package encode

import (
	"bytes"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/runtime/kernelkey"
)

// testEntries are the minimized testdata kernels.
func testEntries(tb testing.TB) []Entry {
	tb.Helper()
	var entries []Entry
	for _, k := range kerneltest.MinBTF(tb, kerneltest.MinBTFDir()) {
		entries = append(entries, Entry{Key: k.Key, VMLinux: k.BTF})
	}
	return entries
}

// testmod is cilium/ebpf's btf_testmod, BTF unlike the kernels'.
func testmod(tb testing.TB) Module {
	tb.Helper()
	m := kerneltest.CiliumTestmod(tb)
	return Module{Name: "bpf_testmod", Base: m.Base, Split: m.Split}
}

func encodePayload(tb testing.TB, entries []Entry, opts *Options) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, entries, opts); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func open(tb testing.TB, b []byte) *payload.Payload {
	tb.Helper()
	p, err := payload.Open(b)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// entry returns p's entry for key.
func entry(tb testing.TB, p *payload.Payload, key kernelkey.Key) payload.Entry {
	tb.Helper()
	e, ok, err := p.Find(key)
	if err != nil || !ok {
		tb.Fatalf("no entry %s: %v", key, err)
	}
	return e
}

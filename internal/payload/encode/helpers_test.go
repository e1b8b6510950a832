package encode_test

import (
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/runtime/kernelkey"
)

// testmod is cilium/ebpf's btf_testmod, BTF unlike the kernels'.
func testmod(tb testing.TB) encode.Module {
	tb.Helper()
	m := kerneltest.CiliumTestmod(tb)
	return encode.Module{Name: "bpf_testmod", Base: m.Base, Split: m.Split}
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

package encode_test

import (
	"slices"
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// multiDictEntries are the testdata kernels and, as two more kernels, the
// base and split BTF of cilium/ebpf's btf_testmod: BTF unlike the kernels'
// (32-byte headers, so stored unpacked), which starts dictionaries of its
// own, stored against the first, when Options.MaxDictSize is 1.
func multiDictEntries(tb testing.TB) []encode.Entry {
	tb.Helper()
	m := kerneltest.CiliumTestmod(tb)
	return append(slices.Clone(payloadtest.Entries(tb)),
		encode.Entry{Key: kernelkey.Key{Arch: "x86_64", Release: "zz-base"}, VMLinux: m.Base},
		encode.Entry{Key: kernelkey.Key{Arch: "x86_64", Release: "zz-split"}, VMLinux: m.Split})
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
	e, ok, err := p.Find(key, nil)
	if err != nil || !ok {
		tb.Fatalf("no entry %s: %v", key, err)
	}
	return e
}

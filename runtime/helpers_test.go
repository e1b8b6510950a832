package runtime

import (
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload/encode"
	// Payloads with module BTF open only in an agent that links module
	// relocation, as the generated code of such a payload does.
	_ "github.com/btfembed/btfembed/runtime/modules"
)

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

func open(tb testing.TB, payload []byte) *Assets {
	tb.Helper()
	return openBudget(tb, payload, 0)
}

// fullBudget is the decode budget of a payload embedding cilium/ebpf's
// full vmlinux BTF (moduleEntry with a base), which btfembed never embeds
// (its entries are minimized): 4.5 MB that cilium/ebpf holds as 29 MB
// once every type is decoded, and the module's copy decodes some of them
// again; the entry holds 51 MB of budget, more while it loads.
const fullBudget = 128 << 20

func openBudget(tb testing.TB, payload []byte, budget int64) *Assets {
	tb.Helper()
	a, err := OpenWithOptions(payload, &OpenOptions{DecodeBudget: budget})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

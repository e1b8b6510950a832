package payload_test

import (
	"bytes"
	"errors"
	goruntime "runtime"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// heapInUse is the live heap after two collections.
func heapInUse() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestCostModel loads BTF of every shape with cilium/ebpf, decodes every
// type, and compares what that really holds with what CheckBTF charges:
// never less (the budget would not bound memory), and for real BTF not
// absurdly more (real payloads would not fit).
func TestCostModel(t *testing.T) {
	type blob struct {
		name  string
		raw   []byte
		loose float64 // how many times the real cost the model may say
	}
	blobs := []blob{
		{"pointer chain", payloadtest.PointerChain(20_000), 4},
		{"name flood", payloadtest.NameFlood(4, 1000, 4<<10), 2},
		{"tagged funcs", payloadtest.TaggedFuncs(200, 2000), 2},
	}
	for _, k := range kerneltest.MinBTF(t, kerneltest.MinBTFDir()) {
		blobs = append(blobs, blob{"minimized " + k.Key.String(), k.BTF, 4})
	}
	if testing.Short() {
		t.Log("-short: no full vmlinux")
	} else {
		blobs = append(blobs, blob{"cilium/ebpf's vmlinux", kerneltest.CiliumTestmod(t).VMLinux, 3})
	}
	for _, b := range blobs {
		checked, err := payload.CheckBTF(b.raw, nil, false, nil)
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		cost := checked.Cost
		h0 := heapInUse()
		spec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(b.raw), nil)
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		h1 := heapInUse()
		// Decode on a goroutine of our own, whose stack growth shows.
		var stack uint64
		done := make(chan error)
		go func() {
			var s0, s1 goruntime.MemStats
			goruntime.ReadMemStats(&s0)
			for _, err := range spec.All() {
				if err != nil {
					done <- err
					return
				}
			}
			goruntime.ReadMemStats(&s1)
			stack = s1.StackInuse - min(s0.StackInuse, s1.StackInuse)
			done <- nil
		}()
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		h2 := heapInUse()
		goruntime.KeepAlive(spec)
		load, decode := h1-min(h0, h1), h2-min(h1, h2)
		t.Logf("%s: %d bytes, %d deep: load %d (model %d), decode %d (model %d), stack %d (model %d)",
			b.name, len(b.raw), cost.Depth, load, cost.Load, decode, cost.Decode, stack, cost.Stack)
		if load > cost.Load || decode > cost.Decode || stack > cost.Stack {
			t.Errorf("%s: the model charges less than cilium/ebpf takes", b.name)
		}
		if real, model := float64(load+decode), float64(cost.Load+cost.Decode); model > b.loose*real {
			t.Errorf("%s: the model charges %.1f times what cilium/ebpf takes, more than %.0f", b.name, model/real, b.loose)
		}
	}
}

// TestCheckBTFRejects: what cilium/ebpf loads but cannot decode, and
// decoding deeper than any budget allows.
func TestCheckBTFRejects(t *testing.T) {
	intType := []uint32{0, payloadtest.Info(rawbtf.KindInt, 0, false), 4, 32}
	for name, raw := range map[string][]byte{
		// Issue 33: a member named by the offset just past the table.
		"member name past the strings": payloadtest.RawBTF([][]uint32{intType,
			{1, payloadtest.Info(rawbtf.KindStruct, 1, false), 4, 3, 1, 0}}, "s\x00"),
		"member name inside a string": payloadtest.RawBTF([][]uint32{intType,
			{1, payloadtest.Info(rawbtf.KindStruct, 1, false), 4, 2, 1, 0}}, "st\x00"),
		"reference past the last type": payloadtest.RawBTF([][]uint32{intType,
			{0, payloadtest.Info(rawbtf.KindPtr, 0, false), 3}}, ""),
		"pointer chain": payloadtest.PointerChain(100_001),
	} {
		if _, err := btf.LoadSplitSpecFromReader(bytes.NewReader(raw), nil); err != nil {
			t.Errorf("%s: cilium/ebpf does not even load it (%v): no case", name, err)
		}
		// Not ErrCorrupt: the BTF need not be the payload's, and the
		// caller says whose it is.
		if _, err := payload.CheckBTF(raw, nil, false, nil); err == nil || errors.Is(err, payload.ErrCorrupt) {
			t.Errorf("%s: error %v, want one that does not wrap ErrCorrupt", name, err)
		}
	}
}

// TestCheckBTFCharges: CheckBTF keeps charged what its result holds until
// Release, and gives back everything on error.
func TestCheckBTFCharges(t *testing.T) {
	raw := payloadtest.TaggedFuncs(10, 10)
	bud := payload.NewBudget(1 << 20)
	b, err := payload.CheckBTF(raw, nil, false, bud)
	if err != nil {
		t.Fatal(err)
	}
	if bud.Used() == 0 {
		t.Error("nothing held for the index")
	}
	b.Release(bud)
	if bud.Used() != 0 {
		t.Errorf("%d bytes still charged after Release", bud.Used())
	}
	tight := payload.NewBudget(int64(len(raw)) + 1)
	if _, err := payload.CheckBTF(raw, nil, false, tight); !errors.Is(err, payload.ErrOverBudget) || tight.Used() != 0 {
		t.Errorf("tight budget: error %v, %d bytes still charged", err, tight.Used())
	}
}

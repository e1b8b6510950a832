package distill_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/btfrelocate"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

func TestLoadRelocated(t *testing.T) {
	d, vmlinux := testmod(t)
	spec, err := distill.LoadRelocatedSpec(d.split, vmlinux.raw, vmlinux.cilium(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var fn *btf.Func
	if err := spec.TypeByName("bpf_testmod_init", &fn); err != nil {
		t.Fatal(err)
	}
}

// TestUnmappedError checks the error text lists every unmapped type and
// gives the layout-compatible hint only when that mode succeeds.
func TestUnmappedError(t *testing.T) {
	target := kernelFor(t, "6.1.0-47-amd64")
	for _, m := range committedModules(t) {
		if m.release != "6.12.118+deb12-amd64" {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			_, split := distillModule(t, m)
			_, err := distill.RelocateSpec(split, target.raw, nil)
			var ue *btfrelocate.UnmappedError
			if !errors.As(err, &ue) {
				t.Fatalf("relocating a 6.12 module onto 6.1: %v, want *UnmappedError", err)
			}
			for _, u := range ue.Types {
				if !strings.Contains(err.Error(), u.String()) {
					t.Errorf("error text lacks %s", u)
				}
			}
			_, layoutErr := distill.RelocateSpec(split, target.raw, &btfrelocate.Options{LayoutCompatible: true})
			hint := strings.Contains(err.Error(), "layout-compatible mode would map them all")
			if hint != (layoutErr == nil) {
				t.Errorf("hint in the error: %v; layout-compatible mode gives %v", hint, layoutErr)
			}
			var layoutUE *btfrelocate.UnmappedError
			if errors.As(layoutErr, &layoutUE) && layoutUE.LayoutCompatible {
				t.Errorf("layout-compatible mode's own error says that mode would succeed")
			}
		})
	}
}

// TestRelocateByteOrder relocates little-endian split BTF onto a
// big-endian copy of its base.
func TestRelocateByteOrder(t *testing.T) {
	base, split := seedPairT(t)
	enc := rawbtf.NewEncoder(binary.BigEndian, nil)
	for id := rawbtf.TypeID(1); id < base.NextID(); id++ {
		typ, err := base.Type(id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := enc.Add(typ.Record()); err != nil {
			t.Fatal(err)
		}
	}
	be, err := rawbtf.Parse(enc.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := distill.RelocateSpec(split, be, nil); err == nil || !strings.Contains(err.Error(), "BigEndian") {
		t.Fatalf("relocating little-endian BTF onto big-endian: %v", err)
	}
	if _, err := distill.RelocateSpec(split, base, nil); err != nil {
		t.Fatalf("relocating onto its own distilled base: %v", err)
	}
}

// seedPairT parses the committed distilled nvme.
func seedPairT(t *testing.T) (base, split *rawbtf.Spec) {
	t.Helper()
	base, err := rawbtf.Parse(readFile(t, seedBase), nil)
	if err != nil {
		t.Fatal(err)
	}
	return base, parseSplit(t, readFile(t, seedSplit), base)
}

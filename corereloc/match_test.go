package corereloc

import (
	"debug/elf"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// render writes an outcome the way cilium/ebpf's COREFixup.String does.
func render(r *Relocation, o Outcome) string {
	switch {
	case o.Status == Ambiguous || o.Status == Failed:
		return "error"
	case o.Poisoned:
		return r.Kind.String() + "=poison"
	case r.Kind == TypeIDLocal:
		return fmt.Sprintf("%v=%d->(builder)", r.Kind, o.Local)
	}
	return fmt.Sprintf("%v=%d->%d", r.Kind, o.Local, o.Target)
}

// ciliumFixups relocates every program of obj against target with
// cilium/ebpf and returns the fixups by section and instruction offset,
// "error" for each relocation of a program cilium/ebpf refuses. Programs
// that call subprograms are left out: cilium/ebpf relocates them together
// with their callees.
func ciliumFixups(t *testing.T, obj string, target *btf.Spec) map[string]string {
	t.Helper()
	coll, err := ebpf.LoadCollectionSpec(obj)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	start := make(map[string]uint64)
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			start[s.Name] = s.Value
		}
	}
	out := make(map[string]string)
	for name, prog := range coll.Programs {
		if len(prog.Instructions.FunctionReferences()) > 0 {
			continue
		}
		var relos []*btf.CORERelocation
		var offs []uint64
		for iter := prog.Instructions.Iterate(); iter.Next(); {
			if relo := btf.CORERelocationMetadata(iter.Ins); relo != nil {
				relos = append(relos, relo)
				offs = append(offs, start[name]+uint64(iter.Offset)*8)
			}
		}
		var b btf.Builder
		fixups, err := btf.CORERelocate(relos, []*btf.Spec{target}, prog.ByteOrder, b.Add)
		for i := range relos {
			s := "error"
			if err == nil {
				s = fixups[i].String()
				if strings.HasPrefix(s, TypeIDLocal.String()+"=") {
					s = s[:strings.Index(s, "->")] + "->(builder)"
				}
			}
			out[fmt.Sprintf("%s+%d", prog.SectionName, offs[i])] = s
		}
	}
	return out
}

// TestMatchAgreesWithCilium compares every outcome of Match with the
// fixup cilium/ebpf computes on the full kernel BTF.
func TestMatchAgreesWithCilium(t *testing.T) {
	objPaths := testObjects(t)
	objs, err := Load(objPaths...)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kernels() {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			res, err := Match(objs, []*rawbtf.Spec{raw})
			if err != nil {
				t.Fatal(err)
			}
			for i, obj := range objs {
				want := ciliumFixups(t, objPaths[i], full)
				if len(want) == 0 {
					t.Fatalf("%s: cilium/ebpf finds no relocation", obj.Path)
				}
				for j := range obj.Relocations {
					r := &obj.Relocations[j]
					w, ok := want[fmt.Sprintf("%s+%d", r.Section, r.InsnOff)]
					if !ok {
						continue // in a program with subprograms
					}
					if got := render(r, res.Outcomes[i][j]); got != w {
						t.Errorf("%v: got %s, cilium/ebpf %s (%v)", r, got, w, res.Outcomes[i][j].Err)
					}
				}
			}
		})
	}
}

// TestOracleCatchesDroppedMembers checks the oracle is not vacuous: a BTF
// that lost every member and enumerator must be reported.
func TestOracleCatchesDroppedMembers(t *testing.T) {
	objPaths := testObjects(t)
	objs, err := Load(objPaths...)
	if err != nil {
		t.Fatal(err)
	}
	k := kernels()[0]
	raw, full := kernelSpecs(t, k)
	res, err := Match(objs, []*rawbtf.Spec{raw})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range res.marks {
		tm.parts, tm.minCount = nil, 0
	}
	minData, _, err := Minimize(res)
	if err != nil {
		t.Fatal(err)
	}
	min, err := btf.LoadSpecFromReader(strings.NewReader(string(minData)))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Verify(objPaths, []*btf.Spec{full}, []*btf.Spec{min})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no mismatch reported for a BTF without members")
	}
	t.Logf("%d mismatches, e.g. %v", len(ms), ms[0])
}

package predict

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vocab"
)

// TestSitesAgreeWithCilium: every instruction cilium/ebpf gives a CO-RE
// relocation gets, from coremin's parse of .BTF.ext, a relocation of
// the kind cilium/ebpf's String names, in instruction order and no
// other, in every object of the tests
// (subprograms, callbacks, both byte orders, 33,857 relocations of big).
func TestSitesAgreeWithCilium(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*.o"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*", "*.o"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, more...)
	total := 0
	for _, path := range paths {
		coll, relos := object(t, path)
		for name, prog := range coll.Programs {
			sites, err := relos.ProgramRelocations(prog)
			if err != nil {
				t.Fatalf("%s %s: %v", path, name, err)
			}
			next := 0 // the site the next relocated instruction must be
			for i := range prog.Instructions {
				cr := btf.CORERelocationMetadata(&prog.Instructions[i])
				if cr == nil {
					continue
				}
				total++
				if next == len(sites) || sites[next].Index != i || sites[next].CORE != cr {
					t.Fatalf("%s %s insn %d: cilium/ebpf's relocation %s is not the next site", path, name, i, cr)
				}
				r := sites[next]
				next++
				// "CORERelocation(byte_off, Struct:"task_struct"[0:211],
				// local_id=5)": a test may read it; the code does not.
				if !strings.HasPrefix(cr.String(), "CORERelocation("+r.Kind.String()+", ") ||
					!strings.HasSuffix(cr.String(), fmt.Sprintf("[%s], local_id=%d)", r.Access, r.TypeID)) {
					t.Fatalf("%s %s insn %d: cilium/ebpf %s, coremin %v", path, name, i, cr, r.Relocation)
				}
			}
			if next != len(sites) {
				t.Fatalf("%s %s: %d sites, %d relocated instructions", path, name, len(sites), next)
			}
		}
	}
	if total < 34000 {
		t.Errorf("%d relocations checked, want the 33,857 of big and the others", total)
	}
}

// TestSitesMismatch: relocations read from another object do not fit a
// program's instructions, and the prediction says so instead of
// guessing.
func TestSitesMismatch(t *testing.T) {
	coll, _ := object(t, filepath.Join(kerneltest.Dir(), "objects", "fields-el.o"))
	_, other := object(t, filepath.Join(kerneltest.Dir(), "objects", "guards-el.o"))
	k := kerneltest.ByName(t, "6.12.118+deb12-amd64")
	for _, p := range Collection("fields-el.o", coll, other, k.Name, []*btf.Spec{kernelSpec(t, k)}, nil) {
		if p.Verdict != vocab.Unknown || len(p.Reasons) != 1 || p.Reasons[0].Kind != vocab.KindAnalysis || !strings.Contains(p.Reasons[0].Text, ".BTF.ext") {
			t.Errorf("%s: %s %q, want unknown for the relocations", p, p.Verdict, p.Reasons)
		}
	}
}

package corereloc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/ciliumcore"
)

// Mismatch is a relocation that cilium/ebpf resolves differently against
// the minimized BTF than against the full BTF.
type Mismatch struct {
	Object     string
	Program    string
	Insn       int    // instruction index in the program, -1 for the whole program
	Relocation string // cilium/ebpf's description: kind, local type, access path
	Full, Min  string // the fixup (or error) against each BTF
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s: program %s insn %d %s: full BTF gives %s, minimized BTF gives %s",
		m.Object, m.Program, m.Insn, m.Relocation, m.Full, m.Min)
}

// Verify is the correctness oracle: for every program of every object it
// runs cilium/ebpf's btf.CORERelocate once against full and once against
// min (each vmlinux first, then modules) and reports every relocation
// whose fixup differs. Errors count as results: a program both fail to
// relocate is no mismatch. A target_type_id fixup is compared by the kind
// and name of the type its ID refers to, since minimizing renumbers types.
func Verify(objPaths []string, full, min []*btf.Spec) ([]Mismatch, error) {
	var out []Mismatch
	for _, path := range objPaths {
		coll, err := ebpf.LoadCollectionSpec(path)
		if err != nil {
			return nil, err
		}
		ms, err := VerifyCollection(path, coll, full, min)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// VerifyCollection is Verify for one object already loaded; name
// identifies it in mismatches.
func VerifyCollection(name string, coll *ebpf.CollectionSpec, full, min []*btf.Spec) ([]Mismatch, error) {
	if len(full) == 0 || len(min) == 0 {
		return nil, fmt.Errorf("%s: no target BTF", name)
	}
	progs := slices.Sorted(func(yield func(string) bool) {
		for p := range coll.Programs {
			if !yield(p) {
				return
			}
		}
	})
	var out []Mismatch
	for _, pname := range progs {
		prog := coll.Programs[pname]
		relos, insns := ciliumcore.Relocations(prog.Instructions)
		if len(relos) == 0 {
			continue
		}
		fullRes := relocate(relos, full, prog)
		minRes := relocate(relos, min, prog)
		if fullRes.err != "" || minRes.err != "" {
			if (fullRes.err == "") != (minRes.err == "") {
				out = append(out, Mismatch{name, pname, -1, "", fullRes.String(), minRes.String()})
			}
			continue
		}
		for i := range relos {
			if fullRes.fixups[i] != minRes.fixups[i] {
				out = append(out, Mismatch{name, pname, insns[i], relos[i].String(), fullRes.fixups[i], minRes.fixups[i]})
			}
		}
	}
	return out, nil
}

type relocation struct {
	fixups []string
	err    string
}

func (r relocation) String() string {
	if r.err != "" {
		return "error: " + r.err
	}
	return strings.Join(r.fixups, ", ")
}

// relocate runs cilium/ebpf's relocation and renders each fixup, with the
// target of target_type_id as the kind and name of the type.
func relocate(relos []*btf.CORERelocation, targets []*btf.Spec, prog *ebpf.ProgramSpec) relocation {
	fixups, err := ciliumcore.Relocate(prog, relos, targets)
	if err != nil {
		return relocation{err: err.Error()}
	}
	out := relocation{fixups: make([]string, len(fixups))}
	for i, f := range fixups {
		s := f.String()
		if v, ok := strings.CutPrefix(s, TypeIDTarget.String()+"="); ok && !strings.HasSuffix(s, "=poison") {
			local, target, _ := strings.Cut(v, "->")
			s = TypeIDTarget.String() + "=" + local + "->" + ciliumcore.DescribeTypeID(targets[0], target)
		}
		out.fixups[i] = s
	}
	return out
}

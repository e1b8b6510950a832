package coremin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/ciliumcore"
	"github.com/btfembed/btfembed/internal/rawbtf"
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
// minimized (each vmlinux first, then modules) and reports every
// relocation whose fixup differs. Errors count as results: a program
// both fail to relocate is no mismatch. A target_type_id fixup is
// compared by the kind and name of the type its ID refers to, since
// minimizing renumbers types.
func Verify(objs []*Object, full, minimized []*btf.Spec) ([]Mismatch, error) {
	o, err := NewOracle(objs)
	if err != nil {
		return nil, err
	}
	fa, err := o.Relocate(full, nil)
	if err != nil {
		return nil, err
	}
	ma, err := o.Relocate(minimized, nil)
	if err != nil {
		return nil, err
	}
	return o.Verify(fa, ma), nil
}

// Oracle is Verify made once for some objects and asked on many kernels,
// each question once: cilium/ebpf's btf.CORERelocate stays the judge,
// but a relocation that hundreds of programs share (a big object inlines
// the same accesses everywhere) is computed once per kernel and BTF, and
// the fixups serve every program and any other caller that needs them
// (the load prediction) through Answers.
type Oracle struct {
	objs  []*Object
	progs [][]program // per object, by name
	order []binary.ByteOrder
}

// NewOracle prepares the questions of objs, loading each with
// cilium/ebpf (Object.Collection).
func NewOracle(objs []*Object) (*Oracle, error) {
	o := &Oracle{objs: objs, progs: make([][]program, len(objs)), order: make([]binary.ByteOrder, len(objs))}
	for i, obj := range objs {
		coll, err := obj.Collection()
		if err != nil {
			return nil, err
		}
		if o.progs[i], err = obj.programs(coll); err != nil {
			return nil, err
		}
		// As the loader: the programs' byte order, the host's if none.
		o.order[i] = binary.NativeEndian
		if coll.ByteOrder != nil {
			o.order[i] = coll.ByteOrder
		}
	}
	return o, nil
}

// Answers are the fixups of an Oracle's objects against one BTF.
// Fixups computes what it must on first use: an Answers is not safe for
// concurrent use.
type Answers struct {
	oracle  *Oracle
	targets []*btf.Spec
	// single[i][r] is Objects[i].Relocations[r] asked alone, for the
	// relocations whose fixup depends on nothing else (see Relocate);
	// grouped[i][t] says local type t of object i has several
	// candidates, so its relocations are asked with their programs.
	single  [][]answer
	grouped []map[btf.TypeID]bool
	exact   []map[string]answers // programs asked whole, by name
}

type answer struct {
	fixup btf.COREFixup
	err   error
	asked bool
}

type answers struct {
	fixups []btf.COREFixup
	err    error
}

// Relocate asks the oracle's questions against targets (vmlinux first,
// then modules). raw, if not nil, is the same BTF as Match reads it, in
// the same order; it counts each local type's candidates. A relocation
// whose local type has at most one candidate is asked once, apart from
// its programs (askSingle): btf.CORERelocate scores candidates per
// program and local type (coreCalculateFixups), but with one candidate or
// none each relocation's fixup is that candidate's for it, or the poison
// (or "does not exist") fixup it would give too, whatever else is asked
// with it. With
// several candidates the score decides, and those relocations are asked
// with their programs, as is every program without raw, with a
// local_type_id relocation, or that some relocation fails.
func (o *Oracle) Relocate(targets []*btf.Spec, raw []*Target) (*Answers, error) {
	if len(targets) == 0 {
		return nil, errors.New("oracle: no target BTF")
	}
	a := &Answers{
		oracle: o, targets: targets, single: make([][]answer, len(o.objs)),
		grouped: make([]map[btf.TypeID]bool, len(o.objs)), exact: make([]map[string]answers, len(o.objs)),
	}
	for i := range o.objs {
		a.exact[i] = map[string]answers{}
	}
	if raw == nil {
		return a, nil
	}
	count := candidateCounts(o.objs, raw)
	for i, obj := range o.objs {
		a.single[i] = make([]answer, len(obj.Relocations))
		a.grouped[i] = map[btf.TypeID]bool{}
		var relos []*btf.CORERelocation
		var which []int32
		for _, p := range o.progs[i] {
			for k, r := range p.which {
				rel := &obj.Relocations[r]
				if rel.Kind == TypeIDLocal || a.single[i][r].asked || a.grouped[i][rel.TypeID] {
					continue
				}
				if rel.TypeName == "" || count[rawbtf.EssentialName(rel.TypeName)] > 1 {
					a.grouped[i][rel.TypeID] = true
					continue
				}
				a.single[i][r].asked = true // queued once: askSingle answers it
				relos, which = append(relos, p.relos[k]), append(which, r)
			}
		}
		a.askSingle(i, relos, which)
	}
	return a, nil
}

// askSingle fills single[i] for relos, Objects[i].Relocations[which[k]]
// each, in one btf.CORERelocate call: it groups relocations by local
// type, and a type of one candidate or none gives each relocation the
// same fixup in any group (see Relocate), so one call answers them all.
// If that call fails, each of them keeps its error, and the programs
// holding them are asked whole, as Answers asks any program some
// relocation fails.
func (a *Answers) askSingle(i int, relos []*btf.CORERelocation, which []int32) {
	if len(relos) == 0 {
		return
	}
	fixups, err := btf.CORERelocate(relos, a.targets, a.oracle.order[i], noLocalTypes)
	for k, r := range which {
		ans := answer{err: err, asked: true}
		if err == nil {
			ans.fixup = fixups[k]
		}
		a.single[i][r] = ans
	}
}

// noLocalTypes stands for the local type numbering, which no relocation
// asked alone needs: local_type_id relocations are asked with their
// programs.
func noLocalTypes(btf.Type) (btf.TypeID, error) {
	return 0, errors.New("local_type_id asked without its program")
}

// essentialNames are the essential names of the named local types of
// objs' relocations, each once. Match, Offers and the oracle look up this
// whole set, so a Target scans its names for it once (see
// rawbtf.Spec.LookupEssentialNames). Each object's are derived once per
// run (Object.essentialNames), not per kernel and module.
func essentialNames(objs []*Object) []string {
	seen := map[string]bool{}
	var names []string
	for _, obj := range objs {
		for _, n := range obj.memo.names() {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}

// essentialNames is essentialNames of the object alone.
func (o *Object) essentialNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, r := range o.Relocations {
		if n := rawbtf.EssentialName(r.TypeName); n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}

// candidateCounts counts, by essential name, the candidates in targets
// of every named local type of objs.
func candidateCounts(objs []*Object, targets []*Target) map[string]int {
	names := essentialNames(objs)
	count := make(map[string]int, len(names))
	for _, t := range targets {
		for name, ids := range t.spec.LookupEssentialNames(names) {
			count[name] += len(ids)
		}
	}
	return count
}

// Fixups returns the fixups of the CO-RE relocations of program name of
// Objects[obj], in instruction order, as btf.CORERelocate computes them
// for the whole program, or the error it gives. An error names, in
// local type ID order, every local type whose relocations cilium/ebpf
// refuses, where btf.CORERelocate names one of them, picked by map order.
func (a *Answers) Fixups(obj int, name string) ([]btf.COREFixup, error) {
	return a.AppendFixups(nil, obj, name)
}

// AppendFixups is Fixups appending to dst: a caller asking for every
// program on every kernel reuses one slice (the load prediction's were a
// twelfth of what a generate run with the big test object allocated).
func (a *Answers) AppendFixups(dst []btf.COREFixup, obj int, name string) ([]btf.COREFixup, error) {
	i, ok := slices.BinarySearchFunc(a.oracle.progs[obj], name, func(p program, name string) int {
		return strings.Compare(p.name, name)
	})
	if !ok {
		return dst, fmt.Errorf("%s: no program %s", a.oracle.objs[obj].Path, name)
	}
	l, err := a.list(obj, &a.oracle.progs[obj][i])
	if err != nil {
		return dst, err
	}
	for k := range l.len() {
		dst = append(dst, l.at(k))
	}
	return dst, nil
}

// fixupList is a program's fixups in instruction order: a slice, or,
// without one, each relocation's own answer (Answers.single), which the
// oracle compares in place. On the big test object, slices built only to
// be compared were 12 % of what a generate run allocates.
type fixupList struct {
	fixups []btf.COREFixup
	single []answer // if set, the answers by relocation, read through which
	which  []int32
}

func (l fixupList) at(k int) btf.COREFixup {
	if l.single == nil {
		return l.fixups[k]
	}
	return l.single[l.which[k]].fixup
}

func (l fixupList) len() int {
	if l.single == nil {
		return len(l.fixups)
	}
	return len(l.which)
}

// list is fixups without building a slice from single answers.
func (a *Answers) list(i int, p *program) (fixupList, error) {
	if len(p.relos) == 0 {
		return fixupList{}, nil
	}
	if a.single[i] != nil && !p.local && a.allSingle(i, p) {
		return fixupList{single: a.single[i], which: p.which}, nil
	}
	if ans, ok := a.exact[i][p.name]; ok {
		return fixupList{fixups: ans.fixups}, ans.err
	}
	fixups, err := ciliumcore.Relocate(p.spec, p.relos, a.targets)
	if err != nil {
		err = a.errorsByType(i, p, err)
	}
	a.exact[i][p.name] = answers{fixups, err}
	return fixupList{fixups: fixups}, err
}

// allSingle says every relocation of p was asked alone, without error.
func (a *Answers) allSingle(i int, p *program) bool {
	for _, r := range p.which {
		if ans := a.single[i][r]; !ans.asked || ans.err != nil {
			return false
		}
	}
	return true
}

// errorsByType relocates each local type's relocations of p alone, in
// type ID order, and joins their errors; first is the error of the
// whole program.
func (a *Answers) errorsByType(i int, p *program, first error) error {
	byType := map[btf.TypeID][]*btf.CORERelocation{}
	for k, r := range p.which {
		t := a.oracle.objs[i].Relocations[r].TypeID
		byType[t] = append(byType[t], p.relos[k])
	}
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(byType)) {
		if _, err := ciliumcore.Relocate(p.spec, byType[t], a.targets); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return first
	}
	return errors.Join(errs...)
}

// Verify compares every program's fixups in full and in minimized, two
// Answers of this oracle, as the package's Verify does.
func (o *Oracle) Verify(full, minimized *Answers) []Mismatch {
	var out []Mismatch
	for i, obj := range o.objs {
		for k := range o.progs[i] {
			p := &o.progs[i][k]
			if len(p.relos) == 0 {
				continue
			}
			ff, ferr := full.list(i, p)
			mf, merr := minimized.list(i, p)
			if ferr != nil || merr != nil {
				if (ferr == nil) != (merr == nil) {
					out = append(out, Mismatch{obj.Path, p.name, -1, "", full.render(ff, ferr), minimized.render(mf, merr)})
				}
				continue
			}
			for j := range p.relos {
				f, m := ff.at(j), mf.at(j)
				typeID := obj.Relocations[p.which[j]].Kind == TypeIDTarget
				if f == m && !typeID {
					continue
				}
				fs, ms := full.fixup(f), minimized.fixup(m)
				if fs != ms {
					out = append(out, Mismatch{obj.Path, p.name, p.insns[j], p.relos[j].String(), fs, ms})
				}
			}
		}
	}
	return out
}

// render describes a program's fixups, or its error.
func (a *Answers) render(fixups fixupList, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	s := make([]string, fixups.len())
	for i := range s {
		s[i] = a.fixup(fixups.at(i))
	}
	return strings.Join(s, ", ")
}

// fixup describes a fixup, with the target of target_type_id as the kind
// and name of the type, which minimizing renumbers.
func (a *Answers) fixup(f btf.COREFixup) string {
	s := f.String()
	if v, ok := strings.CutPrefix(s, TypeIDTarget.String()+"="); ok && !strings.HasSuffix(s, "=poison") {
		local, target, _ := strings.Cut(v, "->")
		s = TypeIDTarget.String() + "=" + local + "->" + ciliumcore.DescribeTypeID(a.targets[0], target)
	}
	return s
}

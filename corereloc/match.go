package corereloc

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// ErrAmbiguous is wrapped by the error of an Outcome whose best candidates
// disagree.
var ErrAmbiguous = errors.New("ambiguous relocation")

// Status is what a relocation comes to on a kernel.
type Status uint8

const (
	// Resolved: a candidate fits; Local and Target hold the fixup.
	Resolved Status = iota
	// Missing: no candidate fits. The instruction is poisoned, or an
	// existence check yields 0 (Target is 0, Local 1).
	Missing
	// Ambiguous: candidates with the same score disagree. cilium/ebpf
	// refuses to load the program (libbpf and bpftool too).
	Ambiguous
	// Failed: computing the relocation, or another one of the same
	// program, is an error, so cilium/ebpf refuses to load the program.
	Failed
)

func (s Status) String() string {
	switch s {
	case Resolved:
		return "resolved"
	case Missing:
		return "missing"
	case Ambiguous:
		return "ambiguous"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// TypeRef names a target type.
type TypeRef struct {
	Target int        // index in the targets given to Match
	ID     btf.TypeID // in that target's BTF
	Kind   string     // BTF kind name: "struct", "enum", "typedef", ...
	Name   string
}

// Outcome is the result of one relocation on the targets.
type Outcome struct {
	Status Status
	// Local and Target are the fixup, for Resolved and Missing. For
	// local_type_id both are the local ID: the loader assigns the final one.
	Local, Target uint64
	Poisoned      bool    // Missing and the instruction is poisoned
	Candidate     TypeRef // the winning target type, for Resolved
	Err           error   // for Ambiguous and Failed
}

// Result is the outcome of every relocation of some objects on one kernel
// (vmlinux and modules), and what of the kernel's BTF they need.
type Result struct {
	Objects []*Object
	// Outcomes[i][j] is the outcome of Objects[i].Relocations[j].
	Outcomes [][]Outcome

	targets []*rawbtf.Spec
	marks   marks
	// pending are type mismatches whose log was not merged: Minimize
	// checks they still fail on the minimized BTF.
	pending []pending
}

// pending is a relocation that does not fit a kept candidate, with what
// the computation read.
type pending struct {
	ref  reloRef
	cand key
	log  []touch
}

// KernelTypeIDs lists the relocations that resolve to a type ID of the
// running kernel (bpf_core_type_id_kernel). An embedded BTF cannot serve
// them: its IDs are not the kernel's.
func (res *Result) KernelTypeIDs() []*Relocation {
	var out []*Relocation
	for i, obj := range res.Objects {
		for j := range obj.Relocations {
			if obj.Relocations[j].Kind == TypeIDTarget && res.Outcomes[i][j].Status == Resolved {
				out = append(out, &obj.Relocations[j])
			}
		}
	}
	return out
}

// reloRef is a relocation by object and index.
type reloRef struct{ obj, idx int }

// candResult is a relocation computed against one candidate.
type candResult struct {
	fix fixup
	err error
}

// Match computes every relocation of objs against targets, with the
// semantics of cilium/ebpf's btf.CORERelocate: targets[0] is vmlinux, the
// rest are module BTFs split over it. A relocation that fails on this
// kernel is recorded in its Outcome, not returned as an error; the error
// is for unusable targets.
//
// Besides outcomes, Match records what of the targets the relocations
// depend on: every candidate that fits at least one relocation and is not
// dominated by another (see dominated), and the types, members and
// enumerators each computation read, for cilium/ebpf's and libbpf's way
// of computing it. Minimize builds the BTF from that.
func Match(objs []*Object, targets []*Target) (*Result, error) {
	specs := make([]*rawbtf.Spec, len(targets))
	for i, t := range targets {
		specs[i] = t.spec
	}
	return match(objs, specs)
}

// match is Match on parsed BTF.
func match(objs []*Object, targets []*rawbtf.Spec) (*Result, error) {
	if len(targets) == 0 {
		return nil, errors.New("no target BTF")
	}
	if targets[0].Base() != nil {
		return nil, errors.New("target 0 (vmlinux) is split BTF")
	}
	for i, t := range targets[1:] {
		if t.Base() != targets[0] {
			return nil, fmt.Errorf("target %d is not split BTF over target 0", i+1)
		}
	}
	bo := targets[0].ByteOrder()
	res := &Result{Objects: objs, targets: targets, Outcomes: make([][]Outcome, len(objs))}
	byName := make(map[string][]reloRef)
	for i, obj := range objs {
		res.Outcomes[i] = make([]Outcome, len(obj.Relocations))
		for j := range obj.Relocations {
			r := &obj.Relocations[j]
			out := &res.Outcomes[i][j]
			switch {
			case obj.ByteOrder != bo:
				*out = Outcome{Status: Failed, Err: fmt.Errorf("can't relocate %v against %v", obj.ByteOrder, bo)}
			case r.Kind == TypeIDLocal:
				// Needs no target: the loader encodes the ID it gives
				// the local type.
				if len(r.accessor) > 1 || r.accessor[0] != 0 {
					*out = Outcome{Status: Failed, Err: fmt.Errorf("%v: unexpected accessor %v", r.Kind, r.accessor)}
				} else {
					*out = Outcome{Status: Resolved, Local: uint64(r.TypeID), Target: uint64(r.TypeID)}
				}
			case r.TypeName == "":
				*out = Outcome{Status: Failed, Err: fmt.Errorf("relocate unnamed or anonymous type %d: %w", r.TypeID, errNotSupported)}
			default:
				name := rawbtf.EssentialName(r.TypeName)
				byName[name] = append(byName[name], reloRef{i, j})
			}
		}
	}

	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)

	res.marks = newMarks()
	w := &walker{targets: targets}
	allCands := candidates(targets, names)
	for _, name := range names {
		refs := byName[name]
		cands := allCands[name]
		table := make([][]candResult, len(refs))
		for k := range table {
			table[k] = make([]candResult, len(cands))
		}
		fitLogs := make([][]touch, len(cands)) // per fitting candidate: what it read
		for ci, c := range cands {
			var keep bool
			var logs []touch
			var fails []pending
			for k, ref := range refs {
				r := &objs[ref.obj].Relocations[ref.idx]
				w.local = objs[ref.obj].btf
				w.log = w.log[:0]
				cand, err := w.typ(c.spec, c.id)
				var f fixup
				if err == nil {
					f, err = w.calcFixup(r, bo, cand)
				}
				table[k][ci] = candResult{f, err}
				switch {
				case err != nil || !f.failed():
					keep = true
					logs = append(logs, w.log...)
				case r.Kind == TypeExists || r.Kind == TypeSize || r.Kind == TypeIDTarget || r.Kind == TypeMatches:
					// A kept pointer whose target is dropped points to
					// void, which could turn a type mismatch behind it
					// into a match: Minimize checks.
					fails = append(fails, pending{ref, c, slices.Clone(w.log)})
				}
			}
			if keep {
				fitLogs[ci] = logs
			}
			// A dropped candidate may still be in the output, as the
			// type of something kept: check its mismatches too.
			res.pending = append(res.pending, fails...)
		}
		for ci, logs := range fitLogs {
			if logs != nil && !dominated(table, ci) {
				res.marks.merge(logs)
			}
		}
		res.score(refs, cands, table)
	}
	res.failPrograms()
	return res, nil
}

// dominated reports whether another candidate decides every relocation
// that candidate ci fits the same way, and every one ci misses either the
// same way or by fitting it. Such a candidate changes no decision:
//   - cilium/ebpf: in each group ci scores no better than its dominator;
//     where it scores the same, both fit the same relocations with the same
//     fixups and miss the others alike, so the tie agrees.
//   - libbpf: every relocation ci fits, its dominator fits alike, so the
//     fitting candidates still agree, and narrowing the candidate list to
//     those that fit a relocation drops ci whenever it drops the dominator.
//
// Of candidates that decide everything alike, the first one is kept. A
// candidate with an error anywhere is never dropped nor a dominator.
func dominated(table [][]candResult, ci int) bool {
	if len(table) == 0 {
		return false
	}
	for cj := range table[0] {
		if cj == ci {
			continue
		}
		dominates, alike := true, true
		for _, row := range table {
			c, d := row[ci], row[cj]
			if c.err != nil || d.err != nil {
				return false
			}
			switch {
			case c.fix == d.fix:
			case c.fix.failed() && !d.fix.failed():
				alike = false // cj fits where ci misses
			default:
				dominates = false
			}
			if !dominates {
				break
			}
		}
		// Alike candidates dominate each other: keep the first.
		if dominates && (!alike || cj < ci) {
			return true
		}
	}
	return false
}

// failPrograms marks Failed every relocation of a program in which one
// relocation is Ambiguous or Failed: cilium/ebpf relocates a program in
// one call, which fails as a whole.
func (res *Result) failPrograms() {
	type prog struct {
		obj              int
		section, program string
	}
	bad := make(map[prog]error)
	for i, obj := range res.Objects {
		for j, o := range res.Outcomes[i] {
			r := &obj.Relocations[j]
			if p := (prog{i, r.Section, r.Program}); (o.Status == Ambiguous || o.Status == Failed) && bad[p] == nil {
				bad[p] = o.Err
			}
		}
	}
	for i, obj := range res.Objects {
		for j := range res.Outcomes[i] {
			r, o := &obj.Relocations[j], &res.Outcomes[i][j]
			if err := bad[prog{i, r.Section, r.Program}]; err != nil && o.Status != Ambiguous && o.Status != Failed {
				*o = Outcome{Status: Failed, Err: fmt.Errorf("program %s not relocated: %w", r.Program, err)}
			}
		}
	}
}

// candidates lists, for each of names, the target types whose essential
// name it is, in vmlinux first, then each module's own types, by ascending
// ID: the candidates and order of btf.CORERelocate. All names are looked
// up in one pass over each target.
func candidates(targets []*rawbtf.Spec, names []string) map[string][]key {
	out := make(map[string][]key, len(names))
	for i, t := range targets {
		found := t.LookupEssentialNames(names)
		for _, name := range names {
			for _, id := range found[name] {
				out[name] = append(out[name], key{i, id})
			}
		}
	}
	return out
}

// score picks, for each group of relocations cilium/ebpf resolves
// together, the candidate with the fewest misses (coreCalculateFixups).
// cilium/ebpf groups by local type within one program, after linking the
// subprograms it calls into it; here a group is one function's
// relocations, subprograms on their own.
func (res *Result) score(refs []reloRef, cands []key, table [][]candResult) {
	type groupKey struct {
		obj     int
		section string
		program string
		typ     rawbtf.TypeID
	}
	groups := make(map[groupKey][]int)
	var order []groupKey
	for k, ref := range refs {
		r := &res.Objects[ref.obj].Relocations[ref.idx]
		g := groupKey{ref.obj, r.Section, r.Program, r.TypeID}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], k)
	}
	for _, g := range order {
		members := groups[g]
		set := func(fn func(k int) Outcome) {
			for _, k := range members {
				res.Outcomes[refs[k].obj][refs[k].idx] = fn(k)
			}
		}
		best, bestScore, err := pickBest(members, cands, table)
		switch {
		case errors.Is(err, ErrAmbiguous):
			set(func(int) Outcome { return Outcome{Status: Ambiguous, Err: err} })
		case err != nil:
			set(func(int) Outcome { return Outcome{Status: Failed, Err: err} })
		case best < 0 || bestScore == len(members):
			set(func(k int) Outcome {
				f := missing(res.Objects[refs[k].obj].Relocations[refs[k].idx].Kind)
				return Outcome{Status: Missing, Local: f.local, Target: f.target, Poisoned: f.poison}
			})
		default:
			c := cands[best]
			t, _ := res.targets[c.spec].Type(c.id)
			ref := TypeRef{Target: c.spec, ID: btf.TypeID(c.id), Kind: t.Kind.String(), Name: t.Name}
			set(func(k int) Outcome {
				f := table[k][best].fix
				st := Resolved
				if f.failed() {
					st = Missing
				}
				return Outcome{Status: st, Local: f.local, Target: f.target, Poisoned: f.poison, Candidate: ref}
			})
		}
	}
}

// pickBest returns the index of the winning candidate for one group and
// its score, -1 if none fits any relocation.
func pickBest(members []int, cands []key, table [][]candResult) (int, int, error) {
	best, bestScore := -1, len(members)
	for ci := range cands {
		score := 0
		for _, k := range members {
			cr := table[k][ci]
			if cr.err != nil {
				return -1, 0, cr.err
			}
			if cr.fix.failed() {
				score++
			}
		}
		switch {
		case score > bestScore:
		case score < bestScore:
			best, bestScore = ci, score
		case best >= 0:
			for _, k := range members {
				a, b := table[k][best].fix, table[k][ci].fix
				if a.local != b.local || a.target != b.target {
					return -1, 0, fmt.Errorf("%v: multiple types match: %w", a.kind, ErrAmbiguous)
				}
			}
		}
	}
	return best, bestScore, nil
}

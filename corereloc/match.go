package corereloc

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// ErrAmbiguous is wrapped by the error of an Outcome whose best candidates
// disagree.
var ErrAmbiguous = errors.New("ambiguous relocation")

//go:generate go tool stringer -type Status -linecomment

// Status is what a relocation comes to on a kernel.
type Status uint8

const (
	// Resolved: a candidate fits; Local and Target hold the fixup.
	Resolved Status = iota // resolved
	// Missing: no candidate fits. The instruction is poisoned, or an
	// existence check yields 0 (Target is 0, Local 1).
	Missing // missing
	// Ambiguous: candidates with the same score disagree. cilium/ebpf
	// refuses to load the program (libbpf and bpftool too).
	Ambiguous // ambiguous
	// Failed: computing the relocation, or another one of the same
	// program, is an error, so cilium/ebpf refuses to load the program.
	Failed // failed
)

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
	// progs[i][j] numbers the function (section and program) of
	// Objects[i].Relocations[j] within the object: groups are per function.
	progs [][]int32
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
	// Big objects inline the same access into hundreds of programs: each
	// distinct relocation (object, local type, access, kind) gets a number
	// and is computed once per candidate; relocations are grouped by the
	// essential name of their local type through those numbers.
	d := newDistinct()
	uids := make([][]int32, len(objs))
	for i, obj := range objs {
		res.Outcomes[i] = make([]Outcome, len(obj.Relocations))
		uids[i] = make([]int32, len(obj.Relocations))
		for j := range obj.Relocations {
			r := &obj.Relocations[j]
			out := &res.Outcomes[i][j]
			uids[i][j] = -1
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
				uids[i][j] = d.add(reloRef{i, j}, r)
			}
		}
	}
	res.numberPrograms()
	refsByName := d.refs(uids, res.progs)
	order := make([]int, len(d.names))
	for n := range order {
		order[n] = n
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(d.names[a], d.names[b]) })
	names := make([]string, len(order))
	for k, n := range order {
		names[k] = d.names[n]
	}

	res.marks = newMarks()
	w := &walker{targets: targets}
	allCands := candidates(targets, names)
	table := make([][]candResult, len(d.reps))
	for _, n := range order {
		refs := refsByName[n]
		cands := allCands[d.names[n]]
		uniq := d.byName[n]
		for _, u := range uniq {
			table[u] = make([]candResult, len(cands))
		}
		fitLogs := make([][]touch, len(cands)) // per fitting candidate: what it read
		for ci, c := range cands {
			var keep bool
			var logs []touch
			for _, u := range uniq {
				ref := d.reps[u]
				r := &objs[ref.obj].Relocations[ref.idx]
				w.local = objs[ref.obj].btf
				w.log = w.log[:0]
				cand, err := w.typ(c.spec, c.id)
				var f fixup
				if err == nil {
					f, err = w.calcFixup(r, bo, cand)
				}
				table[u][ci] = candResult{f, err}
				switch {
				case err != nil || !f.failed():
					keep = true
					logs = append(logs, w.log...)
				case r.Kind == TypeExists || r.Kind == TypeSize || r.Kind == TypeIDTarget || r.Kind == TypeMatches:
					// A kept pointer whose target is dropped points to
					// void, which could turn a type mismatch behind it
					// into a match: Minimize checks. A dropped candidate
					// may still be in the output, as the type of
					// something kept: check its mismatches too.
					res.pending = append(res.pending, pending{ref, c, slices.Clone(w.log)})
				}
			}
			if keep {
				fitLogs[ci] = logs
			}
		}
		rows := make([][]candResult, len(uniq))
		for i, u := range uniq {
			rows[i] = table[u]
		}
		for ci, logs := range fitLogs {
			if logs != nil && !dominated(rows, ci) {
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

// numberPrograms fills res.progs. A function's relocations are adjacent,
// so the map is consulted only where the function changes.
func (res *Result) numberPrograms() {
	type fn struct{ section, program string }
	res.progs = make([][]int32, len(res.Objects))
	for i, obj := range res.Objects {
		ids := make(map[fn]int32)
		res.progs[i] = make([]int32, len(obj.Relocations))
		for j := range obj.Relocations {
			r := &obj.Relocations[j]
			if j > 0 && r.Section == obj.Relocations[j-1].Section && r.Program == obj.Relocations[j-1].Program {
				res.progs[i][j] = res.progs[i][j-1]
				continue
			}
			f := fn{r.Section, r.Program}
			id, ok := ids[f]
			if !ok {
				id = int32(len(ids))
				ids[f] = id
			}
			res.progs[i][j] = id
		}
	}
}

// failPrograms marks Failed every relocation of a program in which one
// relocation is Ambiguous or Failed: cilium/ebpf relocates a program in
// one call, which fails as a whole.
func (res *Result) failPrograms() {
	type prog struct{ obj, id int32 }
	bad := make(map[prog]error)
	for i := range res.Objects {
		for j, o := range res.Outcomes[i] {
			if p := (prog{int32(i), res.progs[i][j]}); (o.Status == Ambiguous || o.Status == Failed) && bad[p] == nil {
				bad[p] = o.Err
			}
		}
	}
	if len(bad) == 0 {
		return
	}
	for i, obj := range res.Objects {
		for j := range res.Outcomes[i] {
			r, o := &obj.Relocations[j], &res.Outcomes[i][j]
			if err := bad[prog{int32(i), res.progs[i][j]}]; err != nil && o.Status != Ambiguous && o.Status != Failed {
				*o = Outcome{Status: Failed, Err: fmt.Errorf("program %s not relocated: %w", r.Program, err)}
			}
		}
	}
}

// reloKey is what a relocation's result on a candidate depends on: its
// object, local type, kind and access. Load gives every relocation of an
// object with the same access string offset the same parsed accessor, so
// its address stands for the access without hashing the string.
type reloKey struct {
	obj    int
	typ    rawbtf.TypeID
	kind   Kind
	access *int
}

// distinct numbers the distinct relocations of a Match and groups them by
// the essential name of their local type.
type distinct struct {
	seen   map[reloKey]int32
	reps   []reloRef       // a representative of each distinct relocation
	typ    []rawbtf.TypeID // local type of each distinct relocation
	nameOf []int32         // index in names of each distinct relocation
	names  []string
	index  map[string]int32
	byName [][]int32 // distinct relocations per name, in order of appearance
	counts []int     // relocations per name
}

func newDistinct() *distinct {
	return &distinct{seen: make(map[reloKey]int32), index: make(map[string]int32)}
}

// add numbers relocation r, found at ref.
func (d *distinct) add(ref reloRef, r *Relocation) int32 {
	k := reloKey{ref.obj, r.TypeID, r.Kind, &r.accessor[0]}
	u, ok := d.seen[k]
	if !ok {
		u = int32(len(d.reps))
		d.seen[k] = u
		d.reps = append(d.reps, ref)
		d.typ = append(d.typ, r.TypeID)
		name := rawbtf.EssentialName(r.TypeName)
		n, ok := d.index[name]
		if !ok {
			n = int32(len(d.names))
			d.index[name] = n
			d.names = append(d.names, name)
			d.byName = append(d.byName, nil)
			d.counts = append(d.counts, 0)
		}
		d.nameOf = append(d.nameOf, n)
		d.byName[n] = append(d.byName[n], u)
	}
	d.counts[d.nameOf[u]]++
	return u
}

// numbered is a relocation with its distinct number and its function (see
// Result.progs): what scoring reads, packed so that it does not reach
// into the relocations.
type numbered struct {
	reloRef
	uid, prog int32
	typ       rawbtf.TypeID // local type
}

// refs lists, per name, every relocation numbered in uids (-1: none), in
// object and relocation order.
func (d *distinct) refs(uids, progs [][]int32) [][]numbered {
	out := make([][]numbered, len(d.names))
	for n, c := range d.counts {
		out[n] = make([]numbered, 0, c)
	}
	for i := range uids {
		for j, u := range uids[i] {
			if u >= 0 {
				n := d.nameOf[u]
				out[n] = append(out[n], numbered{reloRef{i, j}, u, progs[i][j], d.typ[u]})
			}
		}
	}
	return out
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
// relocations, subprograms on their own. table[refs[k].uid][ci] is the
// result of refs[k] on cands[ci].
func (res *Result) score(refs []numbered, cands []key, table [][]candResult) {
	type groupKey struct {
		obj, prog int32
		typ       rawbtf.TypeID
	}
	// A group's relocations are mostly adjacent in refs: look the group
	// up only where it changes.
	index := make(map[groupKey]int)
	var groups [][]int
	last, cur := groupKey{obj: -1}, -1
	for k, ref := range refs {
		g := groupKey{int32(ref.obj), ref.prog, ref.typ}
		if g != last {
			i, ok := index[g]
			if !ok {
				i = len(groups)
				index[g] = i
				groups = append(groups, nil)
			}
			last, cur = g, i
		}
		groups[cur] = append(groups[cur], k)
	}
	for _, members := range groups {
		best, bestScore, err := pickBest(members, refs, cands, table)
		var cand TypeRef
		if err == nil && best >= 0 {
			cand = res.typeRef(cands[best])
		}
		for _, k := range members {
			ref := refs[k]
			out := &res.Outcomes[ref.obj][ref.idx]
			switch {
			case errors.Is(err, ErrAmbiguous):
				*out = Outcome{Status: Ambiguous, Err: err}
			case err != nil:
				*out = Outcome{Status: Failed, Err: err}
			case best < 0 || bestScore == len(members):
				f := missing(res.Objects[ref.obj].Relocations[ref.idx].Kind)
				*out = Outcome{Status: Missing, Local: f.local, Target: f.target, Poisoned: f.poison}
			default:
				f := table[ref.uid][best].fix
				st := Resolved
				if f.failed() {
					st = Missing
				}
				*out = Outcome{Status: st, Local: f.local, Target: f.target, Poisoned: f.poison, Candidate: cand}
			}
		}
	}
}

// typeRef describes target type c.
func (res *Result) typeRef(c key) TypeRef {
	t, _ := res.targets[c.spec].Type(c.id)
	return TypeRef{Target: c.spec, ID: btf.TypeID(c.id), Kind: t.Kind.String(), Name: t.Name}
}

// pickBest returns the index of the winning candidate for one group and
// its score, -1 if none fits any relocation.
func pickBest(members []int, refs []numbered, cands []key, table [][]candResult) (int, int, error) {
	best, bestScore := -1, len(members)
	for ci := range cands {
		score := 0
		for _, k := range members {
			cr := table[refs[k].uid][ci]
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
				a, b := table[refs[k].uid][best].fix, table[refs[k].uid][ci].fix
				if a.local != b.local || a.target != b.target {
					return -1, 0, fmt.Errorf("%v: multiple types match: %w", a.kind, ErrAmbiguous)
				}
			}
		}
	}
	return best, bestScore, nil
}

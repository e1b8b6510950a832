package coremin

import (
	"errors"
	"fmt"
	"iter"
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

	// outcomes are the distinct outcomes, siteOutcome[i][j] the index of
	// that of Objects[i].Sites[j]: sites of one relocation share an
	// outcome unless their functions score it differently or fail, so
	// the table is about as long as the distinct relocations, however
	// often each is inlined.
	outcomes    []Outcome
	siteOutcome [][]int32

	targets []*rawbtf.Spec
	marks   marks
	// pending are type mismatches whose log was not merged: Minimize
	// checks they still fail on the minimized BTF.
	pending []pending
}

// Outcome returns the outcome of site j of Objects[i].
func (res *Result) Outcome(i, j int) Outcome {
	return res.outcomes[res.siteOutcome[i][j]]
}

// SiteRef names a site of a Result: Objects[Object].Sites[Site].
type SiteRef struct{ Object, Site int }

// Sites yields every site with its outcome, object by object, each
// object's in order.
func (res *Result) Sites() iter.Seq2[SiteRef, Outcome] {
	return func(yield func(SiteRef, Outcome) bool) {
		for i, outs := range res.siteOutcome {
			for j, o := range outs {
				if !yield(SiteRef{i, j}, res.outcomes[o]) {
					return
				}
			}
		}
	}
}

// pending is a relocation that does not fit a kept candidate, with what
// the computation read.
type pending struct {
	ref  reloRef
	cand key
	log  []touch
}

// KernelTypeID tells whether site j of Objects[i] resolves to a type ID
// of the running kernel (bpf_core_type_id_kernel). An embedded BTF cannot
// serve it: its IDs are not the kernel's.
func (res *Result) KernelTypeID(i, j int) bool {
	obj := res.Objects[i]
	return obj.Relocations[obj.Sites[j].Relocation].Kind == TypeIDTarget && res.Outcome(i, j).Status == Resolved
}

// reloRef is a distinct relocation: Objects[obj].Relocations[idx].
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
	res := &Result{Objects: objs, targets: targets}
	// Each distinct relocation (object, local type, access, kind) gets a
	// number and is computed once per candidate; relocations are grouped
	// by the essential name of their local type through those numbers.
	// Those that need no target are decided here, once.
	d := newDistinct(objs)
	tab := newOutcomeTable(len(d.reps))
	for u, ref := range d.reps {
		r := &objs[ref.obj].Relocations[ref.idx]
		switch {
		case objs[ref.obj].ByteOrder != bo:
			d.decided[u] = tab.add(Outcome{Status: Failed, Err: fmt.Errorf("can't relocate %v against %v", objs[ref.obj].ByteOrder, bo)})
		case r.Kind == TypeIDLocal:
			// Needs no target: the loader encodes the ID it gives the
			// local type.
			if len(r.accessor) > 1 || r.accessor[0] != 0 {
				d.decided[u] = tab.add(Outcome{Status: Failed, Err: fmt.Errorf("%v: unexpected accessor %v", r.Kind, r.accessor)})
			} else {
				d.decided[u] = tab.add(Outcome{Status: Resolved, Local: uint64(r.TypeID), Target: uint64(r.TypeID)})
			}
		case r.TypeName == "":
			d.decided[u] = tab.add(Outcome{Status: Failed, Err: fmt.Errorf("relocate unnamed or anonymous type %d: %w", r.TypeID, errNotSupported)})
		default:
			d.name(int32(u), rawbtf.EssentialName(r.TypeName))
		}
	}
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
	allCands := candidates(targets, names, essentialNames(objs))
	table := make([][]candResult, len(d.reps))
	for _, n := range order {
		cands := allCands[d.names[n]]
		uniq := d.byName[n]
		for _, u := range uniq {
			table[u] = make([]candResult, len(cands))
		}
		// What a fitting candidate read is merged once it is known not to
		// be dominated; a lone candidate never is, so what it reads is
		// merged at once instead of being held.
		lone := len(cands) == 1
		fitLogs := make([][]touch, len(cands))
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
					if lone {
						res.marks.merge(w.log)
					} else {
						logs = append(logs, w.log...)
					}
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
	}
	s := newScorer(res, d, tab, allCands, table)
	res.siteOutcome = make([][]int32, len(objs))
	for i := range objs {
		s.object(i)
	}
	res.outcomes = tab.outcomes
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

// distinct numbers the distinct relocations of all objects of a Match,
// object after object, and groups them by the essential name of their
// local type.
type distinct struct {
	first   []int32   // number of Objects[i].Relocations[0]
	reps    []reloRef // each distinct relocation
	decided []int32   // its outcome if decided without targets, else -1
	nameOf  []int32   // index in names, -1 if decided
	names   []string
	index   map[string]int32
	byName  [][]int32 // distinct relocations per name, in order
}

func newDistinct(objs []*Object) *distinct {
	d := &distinct{first: make([]int32, len(objs)), index: make(map[string]int32)}
	for i, obj := range objs {
		d.first[i] = int32(len(d.reps))
		for j := range obj.Relocations {
			d.reps = append(d.reps, reloRef{i, j})
		}
	}
	d.decided = make([]int32, len(d.reps))
	d.nameOf = make([]int32, len(d.reps))
	for u := range d.reps {
		d.decided[u], d.nameOf[u] = -1, -1
	}
	return d
}

// name records that relocation u is matched against the candidates of
// essential name name.
func (d *distinct) name(u int32, name string) {
	n, ok := d.index[name]
	if !ok {
		n = int32(len(d.names))
		d.index[name] = n
		d.names = append(d.names, name)
		d.byName = append(d.byName, nil)
	}
	d.nameOf[u] = n
	d.byName[n] = append(d.byName[n], u)
}

// candidates lists, for each of names, the target types whose essential
// name it is, in vmlinux first, then each module's own types, by ascending
// ID: the candidates and order of btf.CORERelocate. The targets are asked
// for all of the objects' names (a superset of names), which they answer
// in one pass and remember for the oracle's same question.
func candidates(targets []*rawbtf.Spec, names, all []string) map[string][]key {
	out := make(map[string][]key, len(names))
	for i, t := range targets {
		found := t.LookupEssentialNames(all)
		for _, name := range names {
			for _, id := range found[name] {
				out[name] = append(out[name], key{i, id})
			}
		}
	}
	return out
}

// outcomeTable holds the distinct outcomes of a Match.
type outcomeTable struct {
	outcomes []Outcome
	// fixes numbers the outcome of a distinct relocation decided by a
	// candidate (its index) or by none (-1).
	fixes map[[2]int32]int32
}

// newOutcomeTable makes a table for n distinct relocations, which mostly
// have one outcome each.
func newOutcomeTable(n int) *outcomeTable {
	return &outcomeTable{outcomes: make([]Outcome, 0, n), fixes: make(map[[2]int32]int32, n)}
}

// add appends o and returns its index.
func (t *outcomeTable) add(o Outcome) int32 {
	t.outcomes = append(t.outcomes, o)
	return int32(len(t.outcomes) - 1)
}

// scorer decides the outcome of every site of a Match from the table of
// each distinct relocation's result on each candidate.
type scorer struct {
	res   *Result
	d     *distinct
	tab   *outcomeTable
	cands [][]key        // per name
	table [][]candResult // [relocation][candidate]

	// Per distinct relocation, for the function being scored: the last
	// function that saw it (1 + a running count), its index in members,
	// and its outcome, with the candidate that decided it (-1: none,
	// noBest: an error or not decided yet).
	seen, slot, out, best []int32
	stamp                 int32
	// typ numbers the local type of each distinct relocation within its
	// object, for grouping members by counting.
	typ     []int32
	members []member
	grouped []member
	split   [][]member // grouped, by local type
	count   []int32    // per local type number: members, then next position
	types   []int32    // local type numbers of the function, in order
}

// noBest marks a distinct relocation not decided by a candidate.
const noBest = -2

func newScorer(res *Result, d *distinct, tab *outcomeTable, cands map[string][]key, table [][]candResult) *scorer {
	n := len(d.reps)
	s := &scorer{res: res, d: d, tab: tab, table: table,
		seen: make([]int32, n), slot: make([]int32, n), out: make([]int32, n), best: make([]int32, n), typ: make([]int32, n)}
	for u := range s.best {
		s.best[u] = noBest
	}
	s.cands = make([][]key, len(d.names))
	for i, name := range d.names {
		s.cands[i] = cands[name]
	}
	types := 0
	for i, obj := range res.Objects {
		num := make(map[btf.TypeID]int32)
		for j, r := range obj.Relocations {
			t, ok := num[r.TypeID]
			if !ok {
				t = int32(len(num))
				num[r.TypeID] = t
			}
			s.typ[d.first[i]+int32(j)] = t
		}
		types = max(types, len(num))
	}
	s.count = make([]int32, types)
	return s
}

// member is a distinct relocation of a scoring group and how many sites
// of the group's function carry it: cilium/ebpf scores sites, not
// distinct relocations.
type member struct {
	uid int32
	n   int32 // sites
}

// object scores the sites of Objects[i], function by function: Load
// makes the sites of a function adjacent.
func (s *scorer) object(i int) {
	obj := s.res.Objects[i]
	outs := make([]int32, len(obj.Sites))
	s.res.siteOutcome[i] = outs
	for start := 0; start < len(obj.Sites); {
		end := start + 1
		for end < len(obj.Sites) && obj.Sites[end].Function == obj.Sites[start].Function {
			end++
		}
		s.function(i, obj.Sites[start:end], outs[start:end])
		start = end
	}
}

// function scores sites, the sites of one function of Objects[i], and
// writes their outcome indices to outs. It picks, for each group of
// relocations cilium/ebpf resolves together, the candidate with the
// fewest misses (coreCalculateFixups). cilium/ebpf groups by local type
// within one program, after linking the subprograms it calls into it;
// here a group is one function's relocations, subprograms on their own.
// If one relocation is Ambiguous or Failed, every other one fails too:
// cilium/ebpf relocates a program in one call, which fails as a whole.
func (s *scorer) function(i int, sites []Site, outs []int32) {
	obj := s.res.Objects[i]
	s.stamp++
	s.members = s.members[:0]
	for _, site := range sites {
		u := s.d.first[i] + site.Relocation
		if s.d.decided[u] >= 0 {
			continue
		}
		if s.seen[u] == s.stamp {
			s.members[s.slot[u]].n++
			continue
		}
		s.seen[u], s.slot[u] = s.stamp, int32(len(s.members))
		s.members = append(s.members, member{u, 1})
	}
	for _, g := range s.groups() {
		s.group(g)
	}

	var failed error
	for k, site := range sites {
		u := s.d.first[i] + site.Relocation
		o := s.d.decided[u]
		if o < 0 {
			o = s.out[u]
		}
		outs[k] = o
		if st := s.tab.outcomes[o].Status; failed == nil && (st == Ambiguous || st == Failed) {
			failed = s.tab.outcomes[o].Err
		}
	}
	if failed == nil {
		return
	}
	fn := obj.Functions[sites[0].Function]
	fail := s.tab.add(Outcome{Status: Failed, Err: fmt.Errorf("program %s not relocated: %w", fn.Name, failed)})
	for k := range sites {
		if st := s.tab.outcomes[outs[k]].Status; st != Ambiguous && st != Failed {
			outs[k] = fail
		}
	}
}

// groups splits s.members by local type, each group in order of first
// site: a counting sort, as functions have a handful of local types.
func (s *scorer) groups() [][]member {
	s.types = s.types[:0]
	for _, m := range s.members {
		t := s.typ[m.uid]
		if s.count[t] == 0 {
			s.types = append(s.types, t)
		}
		s.count[t]++
	}
	out := s.split[:0]
	s.grouped = slices.Grow(s.grouped[:0], len(s.members))[:len(s.members)]
	pos := int32(0)
	for _, t := range s.types {
		n := s.count[t]
		out = append(out, s.grouped[pos:pos+n])
		s.count[t] = pos
		pos += n
	}
	for _, m := range s.members {
		t := s.typ[m.uid]
		s.grouped[s.count[t]] = m
		s.count[t]++
	}
	for _, t := range s.types {
		s.count[t] = 0
	}
	s.split = out
	return out
}

// group decides the outcome of the members of one group, into s.out.
func (s *scorer) group(members []member) {
	cands := s.cands[s.d.nameOf[members[0].uid]]
	total := 0
	for _, m := range members {
		total += int(m.n)
	}
	best, bestScore, err := pickBest(members, total, len(cands), s.table)
	if err != nil {
		st := Failed
		if errors.Is(err, ErrAmbiguous) {
			st = Ambiguous
		}
		o := s.tab.add(Outcome{Status: st, Err: err})
		for _, m := range members {
			s.out[m.uid], s.best[m.uid] = o, noBest
		}
		return
	}
	if bestScore == total {
		best = -1 // every relocation misses: no candidate
	}
	for _, m := range members {
		if s.best[m.uid] == int32(best) {
			// As in the last group that decided it: most do.
			continue
		}
		k := [2]int32{m.uid, int32(best)}
		o, ok := s.tab.fixes[k]
		if !ok {
			o = s.tab.add(s.outcome(m.uid, cands, best))
			s.tab.fixes[k] = o
		}
		s.out[m.uid], s.best[m.uid] = o, int32(best)
	}
}

// outcome is the outcome of distinct relocation u when candidate best
// (-1: none) wins its group.
func (s *scorer) outcome(u int32, cands []key, best int) Outcome {
	if best < 0 {
		ref := s.d.reps[u]
		f := missing(s.res.Objects[ref.obj].Relocations[ref.idx].Kind)
		return Outcome{Status: Missing, Local: f.local, Target: f.target, Poisoned: f.poison}
	}
	f := s.table[u][best].fix
	st := Resolved
	if f.failed() {
		st = Missing
	}
	return Outcome{Status: st, Local: f.local, Target: f.target, Poisoned: f.poison, Candidate: s.res.typeRef(cands[best])}
}

// typeRef describes target type c.
func (res *Result) typeRef(c key) TypeRef {
	t, _ := res.targets[c.spec].Type(c.id)
	return TypeRef{Target: c.spec, ID: btf.TypeID(c.id), Kind: t.Kind.String(), Name: t.Name}
}

// pickBest returns the index of the winning candidate of ncands for one
// group and its score (misses, counted by site, of total), -1 if none
// fits any relocation.
func pickBest(members []member, total, ncands int, table [][]candResult) (int, int, error) {
	best, bestScore := -1, total
	for ci := range ncands {
		score := 0
		for _, m := range members {
			cr := table[m.uid][ci]
			if cr.err != nil {
				return -1, 0, cr.err
			}
			if cr.fix.failed() {
				score += int(m.n)
			}
		}
		switch {
		case score > bestScore:
		case score < bestScore:
			best, bestScore = ci, score
		case best >= 0:
			for _, m := range members {
				a, b := table[m.uid][best].fix, table[m.uid][ci].fix
				if a.local != b.local || a.target != b.target {
					return -1, 0, fmt.Errorf("%v: multiple types match: %w", a.kind, ErrAmbiguous)
				}
			}
		}
	}
	return best, bestScore, nil
}

package generator

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/plural"
	"github.com/btfembed/btfembed/internal/predict"
	"github.com/btfembed/btfembed/internal/vocab"
)

// ErrUnloadable is returned, with FailOnUnloadable, when a program is
// predicted to fail to load on some kernel.
var ErrUnloadable = errors.New("programs predicted not to load")

// ProgramReport is the load prediction for one program on one kernel:
// whether the verifier will reach a poisoned CO-RE instruction there, or
// the program needs what the kernel lacks.
type ProgramReport struct {
	Object  string `json:"object"`
	Program string `json:"program"`
	// Verdict is "loads", "fails" or "unknown" (the analysis cannot
	// tell; Reasons say why).
	Verdict string `json:"verdict"`
	// Reason is the kind of the first of Reasons, what a "fails" or
	// "unknown" verdict is about: "core", "helper", "map_type"... (stable
	// words: docs/predictions.md lists them and says what each means).
	Reason string `json:"reason,omitempty"`
	// Reasons name, for "fails", what fails the program, the first
	// first: the reachable poisoned instruction and its relocation
	// (byte_off task_struct.mm_cid), cilium/ebpf's relocation error, or
	// what the kernel lacks (helper bpf_loop (181) is not in this
	// kernel); for "unknown", why the analysis cannot tell.
	Reasons []string `json:"reasons,omitempty"`
	// Guarded lists poisoned instructions no path reaches: CO-RE guards
	// (bpf_core_field_exists and the like) at work.
	Guarded []string `json:"guarded,omitempty"`
}

// predict predicts every program on one kernel, relocated against its
// BTF, into each object's rows. targets is the full BTF, or the embedded
// BTF (equal for every fixup: the oracle checked that) with typeIDs
// giving, per object and program, the full BTF's kernel type IDs; facts
// are what the full BTF says beyond CO-RE (predict.NewKernel). It
// returns, per object, the kernel type IDs the relocations took by
// program and instruction, and the programs whose relocations
// btf.CORERelocate refused.
func (o *objects) predict(k kernelkey.Key, targets []*btf.Spec, facts *predict.Kernel, rows []objectRows, typeIDs []map[string]map[int]uint64, fixups *coremin.Answers) ([]map[string]map[int]uint64, []map[string]bool) {
	ids := make([]map[string]map[int]uint64, len(o.colls))
	unrelocated := make([]map[string]bool, len(o.colls))
	for i, coll := range o.colls {
		opts := &predict.Options{Release: k.Release, Kernel: facts}
		if typeIDs != nil {
			opts.KernelTypeIDs = func(program string) map[int]uint64 { return typeIDs[i][program] }
		}
		if fixups != nil {
			opts.Fixups = func(dst []btf.COREFixup, program string) ([]btf.COREFixup, error) {
				return fixups.AppendFixups(dst, i, program)
			}
			opts.Memo = o.memos[i]
		}
		ids[i], unrelocated[i] = map[string]map[int]uint64{}, map[string]bool{}
		for _, p := range predict.Collection(o.names[i], coll, o.relos[i], k.String(), targets, opts) {
			rows[i].Programs = append(rows[i].Programs, programReport(p))
			if p.KernelTypeIDs != nil {
				ids[i][p.Program] = p.KernelTypeIDs
			}
			if p.Unrelocated {
				unrelocated[i][p.Program] = true
			}
		}
	}
	return ids, unrelocated
}

// programReport is a prediction as the report shows it.
func programReport(p predict.Prediction) ProgramReport {
	r := ProgramReport{Object: p.Object, Program: p.Program, Verdict: p.Verdict.String(), Guarded: p.Guarded}
	for i, reason := range p.Reasons {
		if i == 0 {
			r.Reason = string(reason.Kind)
		}
		r.Reasons = append(r.Reasons, reason.Text)
	}
	return r
}

// Unloadable counts the programs predicted to fail on some kernel, as
// the user wrote them (a program of bpf2go's amd64 and arm64 objects
// counts once), and the kernels where at least one does.
func (r *Report) Unloadable() (programs, kernels int) {
	failing, kernels := r.failing()
	return len(failing), kernels
}

// failing lists the programs predicted to fail on some kernel, by
// program name, and counts the kernels where at least one does.
func (r *Report) failing() (programs []string, kernels int) {
	seen := map[source]bool{}
	for _, k := range r.Kernels {
		bad := false
		for _, p := range k.Programs {
			if p.Verdict == vocab.Fails.String() {
				if s := sourceOf(p); !seen[s] {
					seen[s] = true
					programs = append(programs, p.Program)
				}
				bad = true
			}
		}
		if bad {
			kernels++
		}
	}
	slices.Sort(programs)
	return programs, kernels
}

// CheckLoadable returns an error wrapping ErrUnloadable if a program is
// predicted to fail on some kernel. It names the programs, so that it
// says what fails where the report is not printed (-q).
func (r *Report) CheckLoadable() error {
	if programs, kernels := r.failing(); len(programs) > 0 {
		verb := "fail"
		if len(programs) == 1 {
			verb = "fails"
		}
		for i, p := range programs {
			programs[i] = esc(p) // read from parts by Merge: printed by the command
		}
		return fmt.Errorf("%w: %s %s on %d of %s: %s", ErrUnloadable, plural.Count(len(programs), "program"), verb,
			kernels, plural.Count(len(r.Kernels), "kernel"), abbreviate(programs, 4))
	}
	return nil
}

// kernelGroup is kernels on which the same programs are checked (objects
// pair with kernels of their architecture) and every one that does not
// load has the same verdict for the same reasons.
type kernelGroup struct {
	label   string
	kernels []string
	checked map[source]bool
	verdict map[source]ProgramReport // a verdict other than loads
}

// groupKernels puts kernels with the same predictions together, in
// report order, labelled A, B, ...
func (r *Report) groupKernels() []*kernelGroup {
	var groups []*kernelGroup
	byKey := map[string]*kernelGroup{}
	for _, k := range r.Kernels {
		var key strings.Builder
		checked := map[source]bool{}
		notLoading := map[source]ProgramReport{}
		for _, p := range k.Programs {
			checked[sourceOf(p)] = true
			fmt.Fprintf(&key, "%s\x00%s\x01", p.Object, p.Program)
			if p.Verdict == vocab.Loads.String() {
				continue
			}
			notLoading[sourceOf(p)] = p
			fmt.Fprintf(&key, "%s\x00%s\x01", p.Verdict, strings.Join(p.Reasons, "\x00"))
		}
		g := byKey[key.String()]
		if g == nil {
			g = &kernelGroup{label: groupLabel(len(groups)), checked: checked, verdict: notLoading}
			byKey[key.String()] = g
			groups = append(groups, g)
		}
		g.kernels = append(g.kernels, k.key())
	}
	return groups
}

// compactGroups is how many kernel groups the program table shows with
// words in its cells; more get one letter each.
const compactGroups = 8

// cell is how the program table shows a verdict.
func cell(verdict string, compact bool) string {
	switch {
	case verdict == vocab.Loads.String() && compact:
		return "."
	case verdict == vocab.Loads.String():
		return "ok"
	case compact && verdict == vocab.Fails.String():
		return "F"
	case compact && verdict == vocab.Unknown.String():
		return "?"
	}
	return verdict
}

// groupLabel is A..Z, then AA, AB, ...
func groupLabel(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

// writePrograms writes the programs that do not load on some kernel as a
// table of programs by kernel group, then each group's kernels, then the
// reasons. With verbose, the guarded misses follow.
func (r *Report) writePrograms(w io.Writer, verbose bool) error {
	groups := r.groupKernels()
	objects := r.sourceObjects()
	var rows []source
	seen := map[source]bool{}
	for _, k := range r.Kernels {
		for _, p := range k.Programs {
			id := sourceOf(p)
			if p.Verdict != vocab.Loads.String() && !seen[id] {
				seen[id] = true
				rows = append(rows, id)
			}
		}
	}
	slices.SortFunc(rows, func(a, b source) int {
		return strings.Compare(objects[a]+"\x00"+a.program, objects[b]+"\x00"+b.program)
	})

	fmt.Fprintln(w)
	switch {
	case len(rows) == 0 && len(objects) == 1:
		fmt.Fprintln(w, "Load prediction: the program loads on every kernel.")
	case len(rows) == 0:
		fmt.Fprintf(w, "Load prediction: all %d programs load on every kernel.\n", len(objects))
	default:
		fmt.Fprintf(w, "Load prediction: %d of %s do not load, or may not, on some kernels (fails: the verifier\n"+
			"reaches a poisoned CO-RE instruction, cilium/ebpf refuses the relocation, or the kernel lacks a helper, map\n"+
			"type, kfunc... the program needs; unknown: the analysis cannot tell; -: the object is not checked on those\n"+
			"kernels). Why gives each program's first reason per kernel group, its kind in brackets (-v: all).\n\n",
			len(rows), plural.Count(len(objects), "program"))
		// Many kernel groups: one letter a cell keeps the table narrow.
		compact := len(groups) > compactGroups
		if compact {
			fmt.Fprintln(w, "F: fails, ?: unknown, .: loads, -: not checked.")
			fmt.Fprintln(w)
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		if compact {
			tw = tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
		}
		fmt.Fprint(tw, "OBJECT\tPROGRAM")
		for _, g := range groups {
			fmt.Fprintf(tw, "\t%s", g.label)
		}
		fmt.Fprintln(tw)
		for _, id := range rows {
			fmt.Fprintf(tw, "%s\t%s", esc(objects[id]), esc(id.program))
			for _, g := range groups {
				v := vocab.Loads.String()
				if p, ok := g.verdict[id]; ok {
					v = p.Verdict
				} else if !g.checked[id] {
					v = "-" // the object is not checked on these kernels
				}
				fmt.Fprintf(tw, "\t%s", esc(cell(v, compact)))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		for _, g := range groups {
			fmt.Fprintf(w, "%s: %s\n", g.label, abbreviate(g.kernels, 6))
		}
		fmt.Fprintln(w, "\nWhy:")
		for _, id := range rows {
			// Groups where the program fails the same way share a line.
			var same [][]*kernelGroup
			for _, g := range groups {
				p, ok := g.verdict[id]
				if !ok {
					continue
				}
				i := slices.IndexFunc(same, func(gs []*kernelGroup) bool {
					q := gs[0].verdict[id]
					return q.Verdict == p.Verdict && q.Reason == p.Reason && slices.Equal(shown(q.Reasons, verbose), shown(p.Reasons, verbose))
				})
				if i < 0 {
					same = append(same, nil)
					i = len(same) - 1
				}
				same[i] = append(same[i], g)
			}
			for _, gs := range same {
				labels := make([]string, len(gs))
				for i, g := range gs {
					labels[i] = g.label
				}
				p := gs[0].verdict[id]
				fmt.Fprintf(w, "  %s %s on %s: %s\n", esc(objects[id]), esc(id.program), strings.Join(labels, ", "), esc(p.Verdict))
				for i, reason := range shown(p.Reasons, verbose) {
					if i == 0 && p.Reason != "" {
						reason += " [" + p.Reason + "]"
					}
					fmt.Fprintf(w, "      %s\n", esc(reason))
				}
				if more := len(p.Reasons) - len(shown(p.Reasons, verbose)); more > 0 {
					fmt.Fprintf(w, "      (%d more with -v)\n", more)
				}
			}
		}
	}
	if verbose {
		r.writeGuarded(w)
	}
	return nil
}

// shown are the reasons the report shows: the first, which is what the
// program fails on first, or all with verbose.
func shown(reasons []string, verbose bool) []string {
	if verbose || len(reasons) < 2 {
		return reasons
	}
	return reasons[:1]
}

// writeGuarded lists the poisoned instructions no path reaches, with the
// kernels where they are poisoned.
func (r *Report) writeGuarded(w io.Writer) {
	type miss struct{ object, program, what string }
	var misses []miss
	on := map[miss][]string{}
	for _, k := range r.Kernels {
		for _, p := range k.Programs {
			for _, g := range p.Guarded {
				m := miss{p.Object, p.Program, g}
				if on[m] == nil {
					misses = append(misses, m)
				}
				on[m] = append(on[m], k.key())
			}
		}
	}
	if len(misses) == 0 {
		return
	}
	fmt.Fprintln(w, "\nGuarded misses (poisoned, but no path reaches them):")
	for _, m := range misses {
		fmt.Fprintf(w, "  %s %s: %s, on %d/%d kernels (%s)\n", esc(m.object), esc(m.program), esc(m.what), len(on[m]), len(r.Kernels), abbreviate(on[m], 4))
	}
}

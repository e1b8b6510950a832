package predict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/vocab"
)

// Options says which kernel the prediction is for.
type Options struct {
	// Release is the release of the kernel whose verifier loads the
	// programs ("6.1.0-47-amd64"). It counts only for what Kernel's
	// types do not decide (features.go: older verifiers decide fewer
	// jumps, keep fewer spilled constants and verify global functions
	// differently; global data needs 5.2), and there it can only make a
	// verdict Unknown. Without Kernel it decides all of these. Empty or
	// unparsable: the most cautious assumptions.
	Release string
	// Kernel, if set, is what the kernel has beyond the BTF its CO-RE
	// relocations resolve against (NewKernel): helpers, map, program and
	// attach types, kfuncs, its own BTF. Nil: only CO-RE is predicted.
	Kernel *Kernel
	// KernelTypeIDs, if set, gives per program (by name) the kernel type
	// ID each target_type_id relocation (by instruction index) takes on
	// the kernel, replacing the ID in targets: targets may then be a
	// minimized BTF, whose fixups equal the full BTF's but whose type IDs
	// are its own.
	KernelTypeIDs func(program string) map[int]uint64
	// Fixups, if set, appends to dst per program (by name) the fixups of
	// its CO-RE relocations against targets, in instruction order, or
	// gives the error btf.CORERelocate gives for them: what the caller's
	// oracle already computed (coremin.Answers.AppendFixups), so they
	// are not computed again. Collection reuses dst from program to
	// program.
	Fixups func(dst []btf.COREFixup, program string) ([]btf.COREFixup, error)
	// Memo, if set with Fixups (and without KernelTypeIDs), is the
	// object's Memo: a program whose fixups, kernel facts and kernel
	// version were predicted before takes that prediction.
	Memo *Memo
}

// Collection predicts every program of an object (coll, as read by
// ebpf.LoadCollectionSpec; relos, the same object as coremin.Load reads
// it) on one kernel, whose BTF is targets: vmlinux first, then modules,
// as cilium/ebpf takes ProgramOptions.KernelTypes and
// ExtraRelocationTargets. object and kernel name the object and the
// kernel in the predictions, which come sorted by program name.
func Collection(object string, coll *ebpf.CollectionSpec, relos *coremin.Object, kernel string, targets []*btf.Spec, opts *Options) []Prediction {
	if opts == nil {
		opts = &Options{}
	}
	m := modelFor(opts.Release, opts.Kernel)
	memoFor := memoKernel(opts)
	var (
		out     []Prediction
		scratch asm.Instructions // each program's relocated copy, in turn
		fixups  []btf.COREFixup  // each program's given fixups, in turn
	)
	for _, name := range slices.Sorted(maps.Keys(coll.Programs)) {
		// The given fixups are asked for once, for the memo and the
		// prediction both.
		var (
			given func() ([]btf.COREFixup, error)
			memo  bool // the fixups are known: memo the prediction
		)
		if opts.Fixups != nil {
			var err error
			fixups, err = opts.Fixups(fixups[:0], name)
			given = func() ([]btf.COREFixup, error) { return fixups, err }
			if memoFor != "" && err == nil {
				if p, ok := opts.Memo.get(name, memoFor, fixups); ok {
					p.Object, p.Kernel = object, kernel
					out = append(out, p)
					continue
				}
				memo = true
			}
		}
		p := Prediction{Object: object, Program: name, Kernel: kernel}
		var ids map[int]uint64
		if opts.KernelTypeIDs != nil {
			ids = opts.KernelTypeIDs(name)
		}
		program(&p, coll, coll.Programs[name], relos, targets, ids, given, m, opts, &scratch)
		if memo {
			opts.Memo.put(name, memoFor, fixups, p)
		}
		out = append(out, p)
	}
	return out
}

// program predicts one program into p: its verdict and, for reuse (see
// Options.KernelTypeIDs), the kernel type IDs its relocations took and
// whether btf.CORERelocate refused them. given, if not nil, gives its
// fixups (Options.Fixups); scratch holds the relocated copy (relocate).
func program(p *Prediction, coll *ebpf.CollectionSpec, prog *ebpf.ProgramSpec, relos *coremin.Object, targets []*btf.Spec, typeIDs map[int]uint64, given func() ([]btf.COREFixup, error), m model, opts *Options, scratch *asm.Instructions) {
	sites, err := relos.ProgramRelocations(prog)
	if err != nil {
		p.Verdict, p.Reasons = vocab.Unknown, []Reason{{vocab.KindAnalysis, fmt.Sprintf("the CO-RE relocations of .BTF.ext: %v", err)}}
		return
	}
	r, refused, err := relocate(prog, relos, sites, targets, typeIDs, given, scratch)
	if err != nil {
		var texts []string
		for _, line := range strings.Split(err.Error(), "\n") {
			texts = append(texts, "cilium/ebpf: apply CO-RE relocations: "+line)
		}
		p.Verdict, p.Reasons, p.Unrelocated = vocab.Fails, reasons(vocab.KindCORE, texts...), refused
		return
	}
	points := make(map[int]point, len(r.poison))
	for pc, what := range r.poison {
		points[pc] = point{kind: vocab.KindCORE, what: what}
	}
	var b beyond
	if opts.Kernel != nil {
		b = checkBeyond(prog, coll.Maps, coll.Variables, r.insns, r.byteOff, opts.Kernel, opts.Release)
		for pc, pt := range b.points {
			if _, ok := points[pc]; !ok {
				points[pc] = pt
			}
		}
	}
	p.Verdict, p.Reasons, p.Guarded, p.ReachedAt = judge(r.insns, prog.Instructions, points, m)
	p.KernelTypeIDs = r.ids
	switch {
	case len(b.fails) > 0:
		// What fails the program whatever the verifier reaches comes
		// first: the kernel refuses it before walking.
		if p.Verdict != vocab.Fails {
			p.Reasons = nil
		}
		p.Verdict, p.Reasons = vocab.Fails, append(append(slices.Clip(b.fails), p.Reasons...), b.after...)
	case p.Verdict == vocab.Fails:
		p.Reasons = append(p.Reasons, b.after...)
	case len(b.after) > 0:
		// The verifier walked the program and refuses it afterwards.
		p.Verdict, p.Reasons = vocab.Fails, slices.Clip(b.after)
	case len(b.unknown) > 0:
		if p.Verdict == vocab.Loads {
			p.Reasons = nil
		}
		p.Verdict, p.Reasons = vocab.Unknown, append(slices.Clip(b.unknown), p.Reasons...)
	}
}

// judge walks relocated instructions and says which of the points (the
// poisoned instructions, the calls the kernel lacks) the verifier
// reaches; source is the program before relocation, whose line info the
// poisoned instructions lost. reachedAt are the raw offsets of the
// poisoned instructions the walk surely reaches.
func judge(insns, source asm.Instructions, points map[int]point, m model) (v vocab.Verdict, _ []Reason, guarded []string, reachedAt []int) {
	if len(points) == 0 {
		return vocab.Loads, nil, nil, nil
	}
	w := newWalker(insns, points, m)
	w.run()

	var fails, unsure []Reason
	for _, pc := range slices.Sorted(maps.Keys(points)) {
		pt := points[pc]
		where := fmt.Sprintf("insn %d%s%s", pc, w.function(pc), sourceOf(source, pc))
		what := fmt.Sprintf("%s: %s at %s", pt.what, pt.op, where)
		if pt.kind == vocab.KindCORE {
			what = fmt.Sprintf("%s poisoned at %s", pt.what, where)
		}
		why, reached := w.hits[pc]
		switch {
		case !reached && pt.unreached != "":
			unsure = append(unsure, Reason{pt.kind, pt.unreached + ": unreachable " + pt.op + " at " + where})
		case !reached:
			guarded = append(guarded, what)
		case why == -1 && !pt.maybe:
			fails = append(fails, Reason{pt.kind, "reachable: " + what})
			if pt.kind == vocab.KindCORE {
				reachedAt = append(reachedAt, rawOffset(insns, pc))
			}
		case why == -1:
			unsure = append(unsure, Reason{pt.kind, "reachable, the kernel may refuse it: " + what})
		default:
			unsure = append(unsure, Reason{pt.kind, "maybe reachable: " + what + ": " + w.why[why]})
		}
	}
	switch {
	case len(fails) > 0:
		return vocab.Fails, fails, guarded, reachedAt
	case len(w.giveUp) > 0:
		// What the walk did not reach before giving up is not known
		// to be guarded.
		return vocab.Unknown, append(reasons(vocab.KindAnalysis, w.giveUp...), unsure...), nil, nil
	case len(unsure) > 0:
		return vocab.Unknown, unsure, guarded, nil
	}
	return vocab.Loads, nil, guarded, nil
}

// rawOffset is the offset of instruction pc as the verifier numbers
// instructions: a 64-bit immediate load takes two slots.
func rawOffset(insns asm.Instructions, pc int) int {
	raw := 0
	for _, ins := range insns[:pc] {
		raw += int(ins.Width())
	}
	return raw
}

// function names the function holding pc when it is not the program's
// entry function.
func (w *walker) function(pc int) string {
	for i := pc; i > 0; i-- {
		if sym := w.insns[i].Symbol(); sym != "" {
			return " in " + sym
		}
	}
	return ""
}

// trimSource shortens a line of C for a reason.
func trimSource(line string) string {
	line = strings.Join(strings.Fields(line), " ")
	if len(line) > 80 {
		line = line[:77] + "..."
	}
	return line
}

// Objects is Collection for BPF object files, each read with
// ebpf.LoadCollectionSpec and coremin.Load and named by its path: the
// predictions for one kernel, in a form a harness that loads the same
// objects on that kernel compares its verdicts with.
func Objects(paths []string, kernel string, targets []*btf.Spec, opts *Options) ([]Prediction, error) {
	relos, err := coremin.Load(paths...)
	if err != nil {
		return nil, err
	}
	var out []Prediction
	for i, path := range paths {
		coll, err := ebpf.LoadCollectionSpec(path)
		if err != nil {
			return nil, fmt.Errorf("load %s with cilium/ebpf: %w", path, err)
		}
		out = append(out, Collection(path, coll, relos[i], kernel, targets, opts)...)
	}
	return out, nil
}

package predict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// Options says which kernel the prediction is for.
type Options struct {
	// Release is the release of the kernel whose verifier loads the
	// programs ("6.1.0-47-amd64"): older verifiers decide fewer jumps,
	// keep fewer spilled constants and verify global functions
	// differently. Empty or unparsable: the most cautious assumptions,
	// which give Unknown more often.
	Release string
	// KernelTypeIDs, if set, gives per program (by name) the kernel type
	// ID each target_type_id relocation (by instruction index) takes on
	// the kernel, replacing the ID in targets: targets may then be a
	// minimized BTF, whose fixups equal the full BTF's but whose type IDs
	// are its own.
	KernelTypeIDs func(program string) map[int]uint64
	// Fixups, if set, gives per program (by name) the fixups of its CO-RE
	// relocations against targets, in instruction order, or the error
	// btf.CORERelocate gives for them: what the caller's oracle already
	// computed (corereloc.Answers), so they are not computed again.
	Fixups func(program string) ([]btf.COREFixup, error)
}

// Collection predicts every program of an object (coll, as read by
// ebpf.LoadCollectionSpec) on one kernel, whose BTF is targets: vmlinux
// first, then modules, as cilium/ebpf takes ProgramOptions.KernelTypes
// and ExtraRelocationTargets. object and kernel name the object and the
// kernel in the predictions, which come sorted by program name.
func Collection(object string, coll *ebpf.CollectionSpec, kernel string, targets []*btf.Spec, opts *Options) []Prediction {
	if opts == nil {
		opts = &Options{}
	}
	m := modelFor(opts.Release)
	var out []Prediction
	for _, name := range slices.Sorted(maps.Keys(coll.Programs)) {
		p := Prediction{Object: object, Program: name, Kernel: kernel}
		var ids map[int]uint64
		if opts.KernelTypeIDs != nil {
			ids = opts.KernelTypeIDs(name)
		}
		var fixups func() ([]btf.COREFixup, error)
		if opts.Fixups != nil {
			fixups = func() ([]btf.COREFixup, error) { return opts.Fixups(name) }
		}
		program(&p, coll.Programs[name], coll.Types, targets, ids, fixups, m)
		out = append(out, p)
	}
	return out
}

// program predicts one program into p: its verdict and, for reuse (see
// Options.KernelTypeIDs), the kernel type IDs its relocations took and
// whether btf.CORERelocate refused them.
func program(p *Prediction, prog *ebpf.ProgramSpec, local *btf.Spec, targets []*btf.Spec, typeIDs map[int]uint64, fixups func() ([]btf.COREFixup, error), m model) {
	insns, poison, ids, refused, err := relocate(prog, local, targets, typeIDs, fixups)
	if err != nil {
		var reasons []string
		for _, line := range strings.Split(err.Error(), "\n") {
			reasons = append(reasons, "cilium/ebpf: apply CO-RE relocations: "+line)
		}
		p.Verdict, p.Reasons, p.Unrelocated = Fails, reasons, refused
		return
	}
	p.Verdict, p.Reasons, p.Guarded, p.ReachedAt = judge(insns, prog.Instructions, poison, m)
	p.KernelTypeIDs = ids
}

// judge walks relocated instructions and says which poisoned ones the
// verifier reaches; source is the program before relocation, whose line
// info the poisoned instructions lost. reachedAt are the raw offsets of the
// poisoned instructions the walk surely reaches.
func judge(insns, source asm.Instructions, poison map[int]string, m model) (v Verdict, reasons, guarded []string, reachedAt []int) {
	if len(poison) == 0 {
		return Loads, nil, nil, nil
	}
	w := newWalker(insns, poison, m)
	w.run()

	var fails, unsure []string
	for _, pc := range slices.Sorted(maps.Keys(poison)) {
		what := fmt.Sprintf("%s poisoned at insn %d%s%s", poison[pc], pc, w.function(pc), sourceOf(source, pc))
		why, reached := w.hits[pc]
		switch {
		case !reached:
			guarded = append(guarded, what)
		case why == -1:
			fails = append(fails, "reachable: "+what)
			reachedAt = append(reachedAt, rawOffset(insns, pc))
		default:
			unsure = append(unsure, "maybe reachable: "+what+": "+w.why[why])
		}
	}
	switch {
	case len(fails) > 0:
		return Fails, fails, guarded, reachedAt
	case len(w.giveUp) > 0:
		// What the walk did not reach before giving up is not known
		// to be guarded.
		return Unknown, append(w.giveUp, unsure...), nil, nil
	case len(unsure) > 0:
		return Unknown, unsure, guarded, nil
	}
	return Loads, nil, guarded, nil
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
// ebpf.LoadCollectionSpec and named by its path: the predictions for one
// kernel, in a form a harness that loads the same objects on that kernel
// compares its verdicts with.
func Objects(paths []string, kernel string, targets []*btf.Spec, opts *Options) ([]Prediction, error) {
	var out []Prediction
	for _, path := range paths {
		coll, err := ebpf.LoadCollectionSpec(path)
		if err != nil {
			return nil, fmt.Errorf("load %s with cilium/ebpf: %w", path, err)
		}
		out = append(out, Collection(path, coll, kernel, targets, opts)...)
	}
	return out, nil
}

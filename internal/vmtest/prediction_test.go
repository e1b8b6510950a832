package vmtest_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/predict"
	"github.com/btfembed/btfembed/internal/vmtest"
	"github.com/btfembed/btfembed/internal/vocab"
)

// The field test checks package predict against the verifiers of the
// booted kernels: after each boot, every program of the objects the guest
// loaded is predicted against the kernel's full BTF from the corpus the
// payload was generated from (vmlinux, and the modules the guest's
// selection handed to cilium/ebpf), with the kernel's release picking the
// verifier model and the kernel's facts (predict.NewKernel: its helpers,
// map, program and attach types, kfuncs, whether it has BTF of its own)
// the checks beyond CO-RE, and the prediction is compared with what the
// guest's verifier did, for every boot.

// outcome is what a guest's kernel did with one program.
type outcome uint8

const (
	loaded outcome = iota
	// poisoned: the verifier reached an instruction cilium/ebpf poisoned
	// for a relocation that does not resolve (cilium/ebpf says "bad CO-RE
	// relocation" when the log ends on the invalid call 0xbad2310 or on
	// the write of 0xbad2310 to r10).
	poisoned
	// relocErr: cilium/ebpf refused to relocate the program, before the
	// verifier (an ambiguous relocation, say).
	relocErr
	// rejected: refused for a reason that is not CO-RE's: a helper, a
	// map type, an attach target, a context access the kernel refuses.
	rejected
)

func outcomeOf(l vmtest.ProgramLoad) outcome {
	switch {
	case l.Loaded:
		return loaded
	case strings.Contains(l.Error, "bad CO-RE relocation"):
		return poisoned
	case strings.Contains(l.Error, "apply CO-RE relocations"):
		return relocErr
	}
	return rejected
}

// kindErrors are the words of cilium/ebpf's or the verifier's error that
// show a rejection has a reason of that kind, as the field test's boots
// report them:
//
//	helper        invalid func unknown#182; unknown func bpf_loop#181;
//	              invalid return type 8 of func bpf_get_current_task_btf#158;
//	              number of funcs in func_info doesn't match (a callback)
//	map_type      map syscalls: map create: invalid argument
//	kfunc         fixing up kfuncs: kfunc "bpf_rcu_read_lock": not supported
//	btf_id_attach attach Tracing/TraceFEntry: fentry do_nanosleep not supported
//	global_data   unrecognized bpf_ld_imm64 insn; map create (of .rodata)
//	ctx_access    invalid bpf_context access off=12 size=8
//	jit           callbacks are not allowed in non-JITed programs
//	bpf_call      bpf2bpf calls not supported (requires >= v4.16)
//	prog_type, attach_type: load program: invalid argument
var kindErrors = map[vocab.Kind][]string{
	vocab.KindHelper:      {"invalid func", "unknown func", "invalid return type", "func_info", "callback"},
	vocab.KindMapType:     {"map create"},
	vocab.KindKfunc:       {"kfunc"},
	vocab.KindBTFIDAttach: {"not supported", "kfunc"},
	vocab.KindGlobalData:  {"bpf_ld_imm64", "map create"},
	vocab.KindCtxAccess:   {"invalid bpf_context access"},
	vocab.KindJIT:         {"non-JITed", "not supported"},
	vocab.KindCall:        {"bpf2bpf calls not supported"},
	vocab.KindProgType:    {"invalid argument"},
	vocab.KindAttachType:  {"invalid argument"},
}

// match is how one prediction compares with the verifier.
type match uint8

const (
	confirmed    match = iota
	contradicted       // the test fails
	unknown            // predicted unknown: the analysis gave up
	// otherCause: predicted to fail, and rejected, but for a reason
	// other than the predicted one (the kernel stopped at something
	// first): the verdict holds, the reason is not confirmed.
	otherCause
	// outside: predicted to load, and rejected for a cause package
	// predict documents as outside its model (outsideModel).
	outside
	excluded // attaches by BTF ID, with the kernel's BTF hidden (needsKernelBTF)
	numMatches
)

var matchNames = [numMatches]string{"confirmed", "contradicted", "unknown", "other cause", "outside the model", "BTF-ID attach, BTF hidden"}

// btfAccessErrors are the verifier's refusals of a load through a pointer
// typed by the kernel's BTF (btf_struct_access: a fentry's or tp_btf's
// arguments): access rules, outside the prediction's model.
var btfAccessErrors = []string{"cannot access ptr member", "access beyond the end of member", "access beyond struct"}

// outsideModel says the rejection l has a cause the prediction does not
// model (internal/predict's doc lists them): the verifier's access rules
// for BTF-typed pointers, or, on a kernel with BTF, a BTF-ID attach target
// the running kernel lacks (a function of a module the guest did not
// load), which depends on what runs, not on the kernel's build.
func outsideModel(l vmtest.ProgramLoad, s side) bool {
	for _, e := range btfAccessErrors {
		if strings.Contains(l.Error, e) {
			return true
		}
	}
	return s != sideNone && needsKernelBTF[l.Type] && strings.Contains(l.Error, ": attach ") && strings.HasSuffix(strings.TrimSpace(l.Error), "not supported")
}

// compare says how prediction p fares against l, a verdict of a boot
// showing the kernel's BTF as s says; why explains a contradiction or
// another cause.
func compare(p predict.Prediction, l vmtest.ProgramLoad, s side) (m match, why string) {
	if s == sideHidden && needsKernelBTF[l.Type] {
		return excluded, ""
	}
	if p.Verdict == vocab.Unknown {
		return unknown, ""
	}
	o := outcomeOf(l)
	switch {
	case p.Verdict == vocab.Loads && o == loaded:
		return confirmed, ""
	case p.Verdict == vocab.Loads && o == rejected && outsideModel(l, s):
		return outside, fmt.Sprintf("predicted loads, the kernel: %s", l.Error)
	case p.Verdict == vocab.Loads, o == loaded:
		return contradicted, fmt.Sprintf("predicted %s %q, the kernel: %s", p.Verdict, p.Reasons, orLoaded(l))
	}
	// Predicted to fail and rejected: for one of the predicted reasons?
	if first := p.Reasons[0]; first.Kind != vocab.KindCORE {
		for _, r := range p.Reasons {
			for _, word := range kindErrors[r.Kind] {
				if o == rejected && strings.Contains(l.Error, word) {
					return confirmed, ""
				}
			}
		}
		return otherCause, fmt.Sprintf("predicted %s %q, the kernel: %s", p.Verdict, p.Reasons, l.Error)
	}
	// CO-RE: a reachable poison (ReachedAt) or cilium/ebpf's relocation
	// error.
	want := relocErr
	if len(p.ReachedAt) > 0 {
		want = poisoned
	}
	switch {
	case o == rejected:
		return otherCause, fmt.Sprintf("predicted %s %q, the kernel: %s", p.Verdict, p.Reasons, l.Error)
	case o != want:
		return contradicted, fmt.Sprintf("predicted %s %q, the kernel: %s", p.Verdict, p.Reasons, l.Error)
	case o == poisoned:
		// The verifier must have stopped at a poison the prediction
		// names, when its log shows where it stopped.
		if at, ok := predict.VerifierPoisonAt(l.Log); ok && !slices.Contains(p.ReachedAt, at) {
			return contradicted, fmt.Sprintf("the verifier stopped at poisoned insn %d (raw), the prediction names %v: %q", at, p.ReachedAt, p.Reasons)
		}
	}
	return confirmed, ""
}

// kindOf is the kind a prediction is counted under: its first reason's,
// or "loads".
func kindOf(p predict.Prediction) string {
	if len(p.Reasons) == 0 {
		return "loads"
	}
	return string(p.Reasons[0].Kind)
}

func orLoaded(l vmtest.ProgramLoad) string {
	if l.Loaded {
		return "loaded"
	}
	return l.Error
}

// tally counts matches, in total and by the kind of the prediction's
// first reason (kindOf), and poisons confirmed at the named instruction.
type tally struct {
	n       [numMatches]int
	byKind  map[string]*[numMatches]int
	poisons int // confirmed poisons
	sameAt  int // of which the verifier's log shows the named instruction
}

func (t *tally) count(kind string, m match, n int) {
	t.n[m] += n
	if t.byKind == nil {
		t.byKind = map[string]*[numMatches]int{}
	}
	if t.byKind[kind] == nil {
		t.byKind[kind] = &[numMatches]int{}
	}
	t.byKind[kind][m] += n
}

func (t *tally) add(o tally) {
	for kind, n := range o.byKind {
		for m, c := range n {
			t.count(kind, match(m), c)
		}
	}
	t.poisons += o.poisons
	t.sameAt += o.sameAt
}

func (t tally) String() string {
	var parts []string
	total := 0
	for i, n := range t.n {
		total += n
		parts = append(parts, fmt.Sprintf("%d %s", n, matchNames[i]))
	}
	return fmt.Sprintf("%d programs: %s; match rate %d/%d decided; poison confirmed %d times, at the named instruction %d/%d",
		total, strings.Join(parts, ", "), t.n[confirmed], t.n[confirmed]+t.n[contradicted], t.poisons, t.sameAt, t.poisons)
}

// matchTotal adds up the kernels' tallies, which run in parallel.
type matchTotal struct {
	mu      sync.Mutex
	kernels map[string]tally
	tally
}

func (m *matchTotal) addKernel(k fieldKernel, t tally) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kernels == nil {
		m.kernels = map[string]tally{}
	}
	m.kernels[k.name()] = t
	m.add(t)
}

func (m *matchTotal) log(t *testing.T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.kernels) == 0 {
		return
	}
	names := sortedKeys(m.kernels)
	t.Logf("prediction against the verifier, %d kernels (%s): %s", len(names), strings.Join(names, ", "), m.tally)
	table := m.table()
	t.Logf("by kernel and reason kind:\n%s", table)
	if *fieldTable != "" {
		if err := os.WriteFile(*fieldTable, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

var fieldTable = flag.String("field.table", "", "write the predictions' comparison by kernel and reason kind, a Markdown table, into this file")

// table is the comparison by kernel and by the kind of each prediction's
// first reason ("loads" for programs predicted to load), all boots of a
// kernel added up: decided predictions (loads or fails) and how they
// fared, and the unknown ones.
func (m *matchTotal) table() string {
	var b strings.Builder
	b.WriteString("| kernel | kind | decided | confirmed | contradicted | other cause | outside the model | unknown | BTF-ID attach, BTF hidden |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	row := func(kernel, kind string, n [numMatches]int) {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d |\n", kernel, kind,
			n[confirmed]+n[contradicted]+n[otherCause]+n[outside], n[confirmed], n[contradicted], n[otherCause], n[outside], n[unknown], n[excluded])
	}
	for _, name := range sortedKeys(m.kernels) {
		t := m.kernels[name]
		for _, kind := range sortedKeys(t.byKind) {
			row(name, kind, *t.byKind[kind])
		}
	}
	row("**all**", "", m.n)
	return b.String()
}

// checkPredictions predicts the programs the guests loaded on kernel k
// and compares each boot's verdicts with them. Each boot is predicted
// with the modules its selection used, from the corpus (extra's, for the
// fetched kernel).
func checkPredictions(t *testing.T, fx *fixture, extra *fetched, k fieldKernel, boots []fieldBoot) tally {
	t.Helper()
	kernels := fx.corpus
	if extra != nil {
		kernels = extra.corpus
	}
	var kernel tally
	for _, b := range boots {
		r, err := decodeRun(b.boot)
		if err != nil {
			t.Errorf("%s: %v", b.side, err)
			continue
		}
		if r.sel.Error != "" {
			continue // nothing loaded; checkField reports it
		}
		preds, err := predictKernel(kernels, fx.objects, fx.archObjects[k.arch], k, r.sel.Modules)
		if err != nil {
			t.Errorf("%s: predict: %v", b.side, err)
			continue
		}
		var boot tally
		for _, p := range preds {
			key := p.Object + "/" + p.Program
			l, ok := r.programs[key]
			if !ok {
				t.Errorf("%s: %s: predicted, not loaded by the guest", b.side, key)
				continue
			}
			m, why := compare(p, l, b.side)
			boot.count(kindOf(p), m, 1)
			switch {
			case m == contradicted:
				t.Errorf("%s, %s: %s: %s", k.name(), b.side, key, why)
			case m == otherCause, m == outside:
				t.Logf("%s, %s: %s: %s", k.name(), b.side, key, why)
			case m == unknown:
				t.Logf("%s, %s: %s: unknown %q; the kernel: %s", k.name(), b.side, key, p.Reasons, orLoaded(l))
			case m == confirmed && outcomeOf(l) == poisoned:
				boot.poisons++
				if _, ok := predict.VerifierPoisonAt(l.Log); ok {
					boot.sameAt++
				}
			}
		}
		if len(preds) != len(r.programs) {
			t.Errorf("%s: %d programs predicted, %d loaded by the guest", b.side, len(preds), len(r.programs))
		}
		if boot.n[confirmed] == 0 {
			t.Errorf("%s, %s: no prediction confirmed", k.name(), b.side)
		}
		t.Logf("%s, %s: prediction against the verifier: %s", k.name(), b.side, boot)
		kernel.add(boot)
	}
	return kernel
}

// predictKernel predicts every object the guest of k loads against k's
// BTF in kernels, with the named modules.
func predictKernel(kernels map[string]*corpus.Kernel, objects []vmtest.File, execsnoop vmtest.File, k fieldKernel, modules []string) ([]predict.Prediction, error) {
	ck, ok := kernels[corpusKey(k.arch, k.release)]
	if !ok {
		return nil, fmt.Errorf("no kernel %s %s in the corpus", k.arch, k.release)
	}
	vmlinux, err := btf.LoadSpecFromReader(bytes.NewReader(ck.VMLinux))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ck.Path, err)
	}
	targets := []*btf.Spec{vmlinux}
	for _, name := range modules {
		i := slices.IndexFunc(ck.Modules, func(m corpus.Module) bool { return m.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%s: no module %s in the corpus", ck.Path, name)
		}
		// Each module over its own copy of vmlinux, as runtime does.
		mod, err := btf.LoadSplitSpecFromReader(bytes.NewReader(ck.Modules[i].BTF), vmlinux.Copy())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ck.Modules[i].Path, err)
		}
		targets = append(targets, mod)
	}
	files := append(slices.Clone(objects), execsnoop)
	colls := make([]*ebpf.CollectionSpec, len(files))
	var kfuncs []string
	for i, f := range files {
		if colls[i], err = ebpf.LoadCollectionSpecFromReader(bytes.NewReader(f.Data)); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		kfuncs = append(kfuncs, predict.Kfuncs(colls[i])...)
	}
	opts := &predict.Options{Release: k.release, Kernel: predict.NewKernel(targets, kfuncs)}
	var out []predict.Prediction
	for i, f := range files {
		relos, err := coremin.LoadFromReader(f.Path, bytes.NewReader(f.Data))
		if err != nil {
			return nil, err
		}
		out = append(out, predict.Collection(path.Base(f.Path), colls[i], relos, k.name(), targets, opts)...)
	}
	return out, nil
}

func corpusKey(arch, release string) string { return arch + "/" + release }

// readCorpus reads every kernel of the corpus roots, with its modules.
func readCorpus(roots []string) (map[string]*corpus.Kernel, error) {
	out := map[string]*corpus.Kernel{}
	for k, err := range corpus.Read(context.Background(), roots, &corpus.Options{Strict: true}) {
		if err != nil {
			return nil, fmt.Errorf("read the corpus: %w", err)
		}
		out[corpusKey(k.Key.Arch, k.Key.Release)] = k
	}
	return out, nil
}

// TestCompare checks the comparison on verdicts as guests report them
// (the errors are cilium/ebpf's, from field test runs).
func TestCompare(t *testing.T) {
	const (
		badCall  = "program p: load program: bad CO-RE relocation: invalid func unknown#195896080 (7 line(s) omitted)"
		badLoad  = "program p: load program: bad CO-RE relocation: frame pointer is read only (4 line(s) omitted)"
		relocate = `program p: apply CO-RE relocations: relocate Struct:"irq_info": byte_off: multiple types match: ambiguous relocation`
		helper   = "program p: load program: invalid argument: unknown func bpf_loop#181 (3 line(s) omitted)"
	)
	poisonAt := func(at int) []string {
		return []string{fmt.Sprintf("%d: (85) call unknown#195896080", at), "invalid func unknown#195896080", "processed 9 insns (limit 1000000)"}
	}
	loads := predict.Prediction{Verdict: vocab.Loads}
	poisonedAt17 := predict.Prediction{Verdict: vocab.Fails, Reasons: []predict.Reason{{Kind: vocab.KindCORE, Text: "reachable: byte_off task_struct.mm_cid poisoned at insn 16"}}, ReachedAt: []int{17}}
	relocFails := predict.Prediction{Verdict: vocab.Fails, Reasons: []predict.Reason{{Kind: vocab.KindCORE, Text: "cilium/ebpf: apply CO-RE relocations: ambiguous"}}}
	unsure := predict.Prediction{Verdict: vocab.Unknown, Reasons: []predict.Reason{{Kind: vocab.KindAnalysis, Text: "maybe reachable"}}}
	fails := func(kind vocab.Kind, text string) predict.Prediction {
		return predict.Prediction{Verdict: vocab.Fails, Reasons: []predict.Reason{{Kind: kind, Text: text}}}
	}
	noLoop := fails(vocab.KindHelper, "helper bpf_loop (181) is not in this kernel")
	btfID := fails(vocab.KindBTFIDAttach, "fentry needs the kernel's own BTF")
	kprobe := func(loaded bool, err string, log []string) vmtest.ProgramLoad {
		return vmtest.ProgramLoad{Type: ebpf.Kprobe.String(), Loaded: loaded, Error: err, Log: log}
	}
	fentry := vmtest.ProgramLoad{Type: ebpf.Tracing.String(), Error: "program f: attach Tracing/TraceFEntry: fentry f not supported"}
	for _, tt := range []struct {
		name string
		p    predict.Prediction
		l    vmtest.ProgramLoad
		s    side
		want match
	}{
		{"loads, loaded", loads, kprobe(true, "", nil), sideHidden, confirmed},
		{"loads, poison reached", loads, kprobe(false, badCall, poisonAt(17)), sideHidden, contradicted},
		{"loads, relocation error", loads, kprobe(false, relocate, nil), sideHidden, contradicted},
		{"poison, reached there", poisonedAt17, kprobe(false, badCall, poisonAt(17)), sideHidden, confirmed},
		{"poison, log without the instruction", poisonedAt17, kprobe(false, badLoad, nil), sideHidden, confirmed},
		{"poison, reached elsewhere", poisonedAt17, kprobe(false, badCall, poisonAt(30)), sideHidden, contradicted},
		{"poison, loaded", poisonedAt17, kprobe(true, "", nil), sideHidden, contradicted},
		{"poison, relocation error", poisonedAt17, kprobe(false, relocate, nil), sideHidden, contradicted},
		{"poison, a helper the kernel lacks first", poisonedAt17, kprobe(false, helper, nil), sideHidden, otherCause},
		{"relocation error, as predicted", relocFails, kprobe(false, relocate, nil), sideHidden, confirmed},
		{"relocation error, loaded", relocFails, kprobe(true, "", nil), sideHidden, contradicted},
		{"unknown", unsure, kprobe(false, badCall, nil), sideHidden, unknown},
		{"loads, a helper the kernel lacks", loads, kprobe(false, helper, nil), sideHidden, contradicted},
		{"helper, as predicted", noLoop, kprobe(false, helper, nil), sideHidden, confirmed},
		{"helper, loaded", noLoop, kprobe(true, "", nil), sideHidden, contradicted},
		{"helper, a poison first", noLoop, kprobe(false, badCall, poisonAt(17)), sideHidden, otherCause},
		{"fentry, BTF hidden", loads, fentry, sideHidden, excluded},
		{"fentry, no BTF, predicted", btfID, fentry, sideNone, confirmed},
		{"fentry, no BTF, predicted to load", loads, fentry, sideNone, contradicted},
		{"fentry, kernel BTF, loaded", loads, vmtest.ProgramLoad{Type: ebpf.Tracing.String(), Loaded: true}, sideVisible, confirmed},
		{"fentry, kernel BTF, no target", loads, fentry, sideVisible, outside},
		{"fentry, kernel BTF, access rules", loads, vmtest.ProgramLoad{Type: ebpf.Tracing.String(), Error: "program direct: load program: permission denied: cannot access ptr member pprev with moff 8 in struct hlist_node with off 8 size 2 (15 line(s) omitted)"}, sideVisible, outside},
		{"map type, one of the reasons", predict.Prediction{Verdict: vocab.Fails, Reasons: []predict.Reason{{Kind: vocab.KindBTFIDAttach, Text: "tp_btf"}, {Kind: vocab.KindMapType, Text: "cgrp storage"}}},
			vmtest.ProgramLoad{Type: ebpf.Tracing.String(), Error: "map syscalls: map create: invalid argument"}, sideNone, confirmed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, why := compare(tt.p, tt.l, tt.s); got != tt.want {
				t.Errorf("compare = %s (%s), want %s", matchNames[got], why, matchNames[tt.want])
			}
		})
	}
}

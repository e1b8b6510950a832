package vmtest_test

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/corereloc"
	"github.com/btfembed/btfembed/generator/corpus"
	"github.com/btfembed/btfembed/internal/predict"
	"github.com/btfembed/btfembed/internal/vmtest"
)

// The field test checks package predict against the verifiers of the
// booted kernels: after each boot, every program of the objects the guest
// loaded is predicted against the kernel's full BTF from the corpus the
// payload was generated from (vmlinux, and the modules the guest's
// selection handed to cilium/ebpf), with the kernel's release picking the
// verifier model, and the prediction is compared with what the guest's
// verifier did, for both boots.

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
	// notCORE: rejected for a reason that is not CO-RE's: a helper, an
	// attach target or a context access the kernel refuses. It tests no
	// prediction: the verifier may have stopped before any poison.
	notCORE
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
	return notCORE
}

// match is how one prediction compares with the verifier.
type match uint8

const (
	confirmed    match = iota
	contradicted       // the test fails
	unknown            // predicted unknown: the analysis gave up
	untested           // rejected for a reason that is not CO-RE's
	excluded           // attaches by BTF ID, so needs the kernel's BTF (needsKernelBTF)
	numMatches
)

var matchNames = [numMatches]string{"confirmed", "contradicted", "unknown", "not CO-RE", "needs kernel BTF"}

// compare says how prediction p fares against l; why explains a
// contradiction.
func compare(p predict.Prediction, l vmtest.ProgramLoad) (m match, why string) {
	if needsKernelBTF[l.Type] {
		return excluded, ""
	}
	o := outcomeOf(l)
	if o == notCORE {
		return untested, ""
	}
	if p.Verdict == predict.Unknown {
		return unknown, ""
	}
	// A Fails verdict is either a reachable poison (ReachedAt) or
	// cilium/ebpf's relocation error.
	want := loaded
	switch {
	case p.Verdict == predict.Fails && len(p.ReachedAt) > 0:
		want = poisoned
	case p.Verdict == predict.Fails:
		want = relocErr
	}
	if o != want {
		return contradicted, fmt.Sprintf("predicted %s %q, the kernel: %s", p.Verdict, p.Reasons, orLoaded(l))
	}
	if o == poisoned {
		// The verifier must have stopped at a poison the prediction
		// names, when its log shows where it stopped.
		if at, ok := predict.VerifierPoisonAt(l.Log); ok && !slices.Contains(p.ReachedAt, at) {
			return contradicted, fmt.Sprintf("the verifier stopped at poisoned insn %d (raw), the prediction names %v: %q", at, p.ReachedAt, p.Reasons)
		}
	}
	return confirmed, ""
}

func orLoaded(l vmtest.ProgramLoad) string {
	if l.Loaded {
		return "loaded"
	}
	return l.Error
}

// tally counts matches, and poisons confirmed at the named instruction.
type tally struct {
	n       [numMatches]int
	poisons int // confirmed poisons
	sameAt  int // of which the verifier's log shows the named instruction
}

func (t *tally) add(o tally) {
	for i := range t.n {
		t.n[i] += o.n[i]
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
	kernels int
	tally
}

func (m *matchTotal) addKernel(t tally) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kernels++
	m.add(t)
}

func (m *matchTotal) log(t *testing.T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kernels > 0 {
		t.Logf("prediction against the verifier, %d kernels x 2 boots: %s", m.kernels, m.tally)
	}
}

// checkPredictions predicts the programs the guests loaded on kernel k
// and compares each boot's verdicts with them. Each boot is predicted
// with the modules its selection used, from the corpus.
func checkPredictions(t *testing.T, fx *fixture, k fieldKernel, hiddenBoot, visibleBoot *vmtest.Boot) tally {
	t.Helper()
	var kernel tally
	for _, side := range []struct {
		name string
		boot *vmtest.Boot
	}{{"kernel BTF", visibleBoot}, {"embedded BTF", hiddenBoot}} {
		r, err := decodeRun(side.boot)
		if err != nil {
			t.Errorf("%s: %v", side.name, err)
			continue
		}
		if r.sel.Error != "" {
			continue // nothing loaded; checkField reports it
		}
		preds, err := fx.predict(k, r.sel.Modules)
		if err != nil {
			t.Errorf("%s: predict: %v", side.name, err)
			continue
		}
		var boot tally
		for _, p := range preds {
			key := p.Object + "/" + p.Program
			l, ok := r.programs[key]
			if !ok {
				t.Errorf("%s: %s: predicted, not loaded by the guest", side.name, key)
				continue
			}
			m, why := compare(p, l)
			boot.n[m]++
			switch {
			case m == contradicted:
				t.Errorf("%s, %s: %s: %s", k.name(), side.name, key, why)
			case m == unknown:
				t.Logf("%s, %s: %s: unknown %q; the kernel: %s", k.name(), side.name, key, p.Reasons, orLoaded(l))
			case m == confirmed && outcomeOf(l) == poisoned:
				boot.poisons++
				if _, ok := predict.VerifierPoisonAt(l.Log); ok {
					boot.sameAt++
				}
			}
		}
		if len(preds) != len(r.programs) {
			t.Errorf("%s: %d programs predicted, %d loaded by the guest", side.name, len(preds), len(r.programs))
		}
		if boot.n[confirmed] == 0 {
			t.Errorf("%s, %s: no prediction confirmed", k.name(), side.name)
		}
		t.Logf("%s, %s: prediction against the verifier: %s", k.name(), side.name, boot)
		kernel.add(boot)
	}
	return kernel
}

// predict predicts every object the guest of k loads against k's BTF in
// the corpus, with the named modules.
func (fx *fixture) predict(k fieldKernel, modules []string) ([]predict.Prediction, error) {
	ck, ok := fx.corpus[corpusKey(k.arch, k.release)]
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
	var out []predict.Prediction
	for _, f := range append(slices.Clone(fx.objects), fx.archObjects[k.arch]) {
		coll, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(f.Data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		relos, err := corereloc.LoadFromReader(f.Path, bytes.NewReader(f.Data))
		if err != nil {
			return nil, err
		}
		out = append(out, predict.Collection(path.Base(f.Path), coll, relos, k.name(), targets, &predict.Options{Release: k.release})...)
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
	loads := predict.Prediction{Verdict: predict.Loads}
	poisonedAt17 := predict.Prediction{Verdict: predict.Fails, Reasons: []predict.Reason{{Kind: predict.KindCORE, Text: "reachable: byte_off task_struct.mm_cid poisoned at insn 16"}}, ReachedAt: []int{17}}
	relocFails := predict.Prediction{Verdict: predict.Fails, Reasons: []predict.Reason{{Kind: predict.KindCORE, Text: "cilium/ebpf: apply CO-RE relocations: ambiguous"}}}
	unsure := predict.Prediction{Verdict: predict.Unknown, Reasons: []predict.Reason{{Kind: predict.KindAnalysis, Text: "maybe reachable"}}}
	kprobe := func(loaded bool, err string, log []string) vmtest.ProgramLoad {
		return vmtest.ProgramLoad{Type: ebpf.Kprobe.String(), Loaded: loaded, Error: err, Log: log}
	}
	for _, tt := range []struct {
		name string
		p    predict.Prediction
		l    vmtest.ProgramLoad
		want match
	}{
		{"loads, loaded", loads, kprobe(true, "", nil), confirmed},
		{"loads, poison reached", loads, kprobe(false, badCall, poisonAt(17)), contradicted},
		{"loads, relocation error", loads, kprobe(false, relocate, nil), contradicted},
		{"poison, reached there", poisonedAt17, kprobe(false, badCall, poisonAt(17)), confirmed},
		{"poison, log without the instruction", poisonedAt17, kprobe(false, badLoad, nil), confirmed},
		{"poison, reached elsewhere", poisonedAt17, kprobe(false, badCall, poisonAt(30)), contradicted},
		{"poison, loaded", poisonedAt17, kprobe(true, "", nil), contradicted},
		{"poison, relocation error", poisonedAt17, kprobe(false, relocate, nil), contradicted},
		{"relocation error, as predicted", relocFails, kprobe(false, relocate, nil), confirmed},
		{"relocation error, loaded", relocFails, kprobe(true, "", nil), contradicted},
		{"unknown", unsure, kprobe(false, badCall, nil), unknown},
		{"helper the kernel lacks", loads, kprobe(false, helper, nil), untested},
		{"fentry", poisonedAt17, vmtest.ProgramLoad{Type: ebpf.Tracing.String(), Error: "attach Tracing/TraceFEntry: fentry f not supported"}, excluded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, why := compare(tt.p, tt.l); got != tt.want {
				t.Errorf("compare = %s (%s), want %s", matchNames[got], why, matchNames[tt.want])
			}
		})
	}
}

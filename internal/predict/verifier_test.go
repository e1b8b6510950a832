package predict

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vocab"
)

// outcome is what the running kernel's verifier did with a program
// relocated against one corpus kernel's BTF.
type outcome uint8

const (
	loaded   outcome = iota
	poisoned         // cilium/ebpf: bad CO-RE relocation (the verifier reached a poisoned instruction)
	relocErr         // cilium/ebpf refused to relocate
	other            // rejected for a reason that is not CO-RE's: helper, context access, map type...
)

var outcomeNames = [...]string{"loaded", "poisoned", "relocation error", "other"}

// loadOutcome loads one program of coll, alone, with kernel as
// KernelTypes.
func loadOutcome(coll *ebpf.CollectionSpec, prog string, kernel *btf.Spec) (outcome, error) {
	one := coll.Copy()
	for name := range one.Programs {
		if name != prog {
			delete(one.Programs, name)
		}
	}
	c, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{
		Programs: ebpf.ProgramOptions{KernelTypes: kernel},
	})
	if err == nil {
		c.Close()
		return loaded, nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "bad CO-RE relocation"):
		return poisoned, err
	case strings.Contains(msg, "apply CO-RE relocations"):
		return relocErr, err
	}
	return other, err
}

// agrees says whether a prediction is confirmed (1), contradicted (-1)
// or not tested (0) by what the verifier did. A program the verifier
// rejects for another reason tests nothing: it may have stopped before
// the poisoned instruction.
func agrees(p Prediction, o outcome) int {
	if o == other || p.Verdict == vocab.Unknown {
		return 0
	}
	relocation := p.Verdict == vocab.Fails && p.Reasons[0].Kind == vocab.KindCORE && strings.HasPrefix(p.Reasons[0].Text, "cilium/ebpf:")
	switch {
	case p.Verdict == vocab.Loads && o == loaded,
		p.Verdict == vocab.Fails && !relocation && o == poisoned,
		relocation && o == relocErr:
		return 1
	}
	return -1
}

// validationObjects are the little-endian objects with CO-RE
// relocations of the repository (testdata, bpf2go's for every
// architecture, coremin's), cilium/ebpf's CO-RE test objects, and
// those matching the space-separated globs in $BTFEMBED_PREDICT_OBJECTS
// (to validate on other objects: bcc's libbpf-tools, an agent's own).
func validationObjects(t *testing.T) []string {
	var extra []string
	for _, pattern := range strings.Fields(os.Getenv("BTFEMBED_PREDICT_OBJECTS")) {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatalf("$BTFEMBED_PREDICT_OBJECTS: %v", err)
		}
		extra = append(extra, m...)
	}
	objs, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*-el.o"))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(kerneltest.Dir(), "..")
	for _, pattern := range []string{
		// bpf2go's outputs: the test object and the example's.
		filepath.Join(root, "testdata", "objects", "bpf2go", "*_bpfel.o"),
		// What older kernels lack: helpers, map types, kfuncs...
		filepath.Join(root, "testdata", "objects", "features", "*-el.o"),
		filepath.Join(root, "examples", "execsnoop", "*_bpfel.o"),
		// coremin's: libbpf's selftest patterns, counts, flexible arrays.
		filepath.Join(root, "internal", "coremin", "testdata", "patterns", "*.o"),
		filepath.Join(root, "internal", "coremin", "testdata", "*-el.o"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m...)
	}
	cilium, err := filepath.Glob(filepath.Join(kerneltest.CiliumTestdata(t), "relocs*-el.elf"))
	if err != nil {
		t.Fatal(err)
	}
	return append(append(objs, cilium...), extra...)
}

// TestVerifierAgrees loads every program of every validation object on
// this machine's kernel, relocated against each testdata kernel's BTF and
// the running kernel's, and compares the verifier's verdict with the
// prediction. Whether the verifier reaches a poisoned instruction does
// not depend on which kernel's BTF produced the poison, so one kernel's
// verifier checks the predictions for all. The running kernel's release
// picks the verifier the walk models (model.go).
//
//	go test -run TestVerifierAgrees -v ./internal/predict
func TestVerifierAgrees(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loading programs needs root")
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Skipf("remove the memlock limit: %v", err)
	}
	probe, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.SocketFilter,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
		t.Skipf("bpf() is refused on this machine: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	running := kerneltest.Running(t)
	kernels := append(kerneltest.Corpus(t), running)
	specs := make([]*btf.Spec, len(kernels))
	for i, k := range kernels {
		specs[i] = kernelSpec(t, k)
	}

	var total, confirmed, contradicted, unknown, untested, sameInsn int
	byOutcome := map[string]int{}
	for _, path := range validationObjects(t) {
		coll, relos := object(t, path)
		name := filepath.Base(path)
		for i, k := range kernels {
			// What the kernel has beyond CO-RE is the running kernel's:
			// its verifier loads the programs.
			facts := NewKernel(specs[len(specs)-1:], Kfuncs(coll))
			for _, p := range Collection(name, coll, relos, k.Name, specs[i:i+1], &Options{Release: running.Release, Kernel: facts}) {
				o, err := loadOutcome(coll, p.Program, specs[i])
				total++
				byOutcome[fmt.Sprintf("%s/%s", p.Verdict, outcomeNames[o])]++
				switch agrees(p, o) {
				case 1:
					confirmed++
					if o == poisoned {
						if at, ok := sameInstruction(p, err); ok {
							sameInsn++
						} else {
							t.Errorf("%s: the verifier stopped at poisoned insn %d (raw), which the prediction %q does not name", p, at, p.Reasons)
						}
					}
				case -1:
					contradicted++
					t.Errorf("%s: predicted %s %q, verifier: %s: %v", p, p.Verdict, p.Reasons, outcomeNames[o], err)
				default:
					if p.Verdict == vocab.Unknown {
						unknown++
						t.Logf("%s: unknown %q; verifier: %s", p, p.Reasons, outcomeNames[o])
					} else {
						untested++
						t.Logf("%s: %s; verifier rejected it for another reason: %s", p, p.Verdict, firstLine(err))
					}
				}
			}
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range byOutcome {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		t.Logf("prediction/verifier %s: %d", k, byOutcome[k])
	}
	t.Logf("%d program x kernel pairs: %d confirmed, %d contradicted, %d unknown, %d not tested (rejected for a reason unrelated to CO-RE); match rate %d/%d tested; "+
		"the verifier stopped at a poisoned instruction the prediction named in %d/%d",
		total, confirmed, contradicted, unknown, untested, confirmed, confirmed+contradicted, sameInsn, byOutcome["fails/poisoned"])
	if confirmed == 0 {
		t.Error("no prediction was tested")
	}
}

// sameInstruction checks that the poisoned instruction the verifier
// stopped at (a raw offset in its log) is one the prediction names.
func sameInstruction(p Prediction, err error) (int, bool) {
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		return -1, false
	}
	at, ok := VerifierPoisonAt(ve.Log)
	return at, ok && slices.Contains(p.ReachedAt, at)
}

// firstLine is the start of a verifier error, whose log can be long.
func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

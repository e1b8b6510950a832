package predict

import (
	"fmt"

	"github.com/btfembed/btfembed/internal/vocab"
)

// Prediction is the verdict on one program of one object on one kernel.
type Prediction struct {
	Object  string
	Program string
	Kernel  string
	Verdict vocab.Verdict
	// Reasons explain Fails and Unknown, each with its Kind: the
	// reachable poisoned instruction and its relocation
	// (task_struct.mm_cid) or the cilium/ebpf error (vocab.KindCORE), what the
	// kernel lacks (a helper, map type, kfunc...), or why the analysis
	// gave up. For Fails they are the reasons it fails: the first is
	// the one a report shows.
	Reasons []Reason
	// Guarded lists the poisoned instructions, and the calls to helpers
	// and kfuncs the kernel lacks, that cannot be reached: CO-RE guards
	// doing their job.
	Guarded []string
	// KernelTypeIDs is the kernel type ID each target_type_id relocation
	// took, by instruction index; Unrelocated says btf.CORERelocate
	// refused the program's relocations (Reasons give its errors). Both
	// let a caller reuse what a prediction depends on (see
	// Options.KernelTypeIDs).
	KernelTypeIDs map[int]uint64
	Unrelocated   bool
	// ReachedAt are the raw offsets of the reachable poisoned
	// instructions of a Fails verdict, numbered as the verifier's log
	// numbers instructions (a 64-bit immediate load takes two), so that
	// a harness can check the verifier stopped at one of them
	// (VerifierPoisonAt).
	ReachedAt []int
}

func (p Prediction) String() string {
	return fmt.Sprintf("%s %s on %s: %s", p.Object, p.Program, p.Kernel, p.Verdict)
}

// Reason is why a program fails, or may fail, on a kernel: its kind and
// a sentence for people.
type Reason struct {
	Kind vocab.Kind
	Text string
}

func (r Reason) String() string { return r.Text }

// reasons makes reasons of one kind from texts.
func reasons(kind vocab.Kind, texts ...string) []Reason {
	out := make([]Reason, len(texts))
	for i, t := range texts {
		out[i] = Reason{kind, t}
	}
	return out
}

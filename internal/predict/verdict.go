package predict

import "fmt"

// Verdict is what a program is predicted to do on a kernel.
type Verdict uint8

const (
	// Loads: no poisoned instruction can be reached, cilium/ebpf
	// relocates the program without error, and the kernel has what the
	// model checks beyond CO-RE (doc.go says what that is, and what it
	// does not check).
	Loads Verdict = iota
	// Fails: cilium/ebpf refuses to relocate the program, the verifier
	// reaches a poisoned instruction, or the kernel lacks what the
	// program needs (a helper, map type, kfunc, its own BTF...).
	Fails
	// Unknown: the analysis cannot decide; Reasons say why.
	Unknown
)

var verdictNames = [...]string{Loads: "loads", Fails: "fails", Unknown: "unknown"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", v)
}

// Prediction is the verdict on one program of one object on one kernel.
type Prediction struct {
	Object  string
	Program string
	Kernel  string
	Verdict Verdict
	// Reasons explain Fails and Unknown, each with its Kind: the
	// reachable poisoned instruction and its relocation
	// (task_struct.mm_cid) or the cilium/ebpf error (KindCORE), what the
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

package predict

import "fmt"

// Verdict is what a program is predicted to do on a kernel.
type Verdict uint8

const (
	// Loads: no poisoned instruction can be reached and cilium/ebpf
	// relocates the program without error.
	Loads Verdict = iota
	// Fails: cilium/ebpf refuses to relocate the program, or the verifier
	// reaches a poisoned instruction.
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
	// Reasons explain Fails and Unknown: the reachable poisoned
	// instruction and its relocation (task_struct.mm_cid), or the
	// cilium/ebpf error, or why the analysis gave up.
	Reasons []string
	// Guarded lists the poisoned instructions that cannot be reached:
	// CO-RE guards doing their job.
	Guarded []string
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

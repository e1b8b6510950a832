package vmtest

// ProgramLoad is the kernel's verdict on loading one program of an object:
// what guests report per program, so that a boot's results can be compared
// with another boot's or with a prediction.
type ProgramLoad struct {
	Object  string `json:"object"`  // file name of the BPF object
	Program string `json:"program"` // the program's (function) name
	Section string `json:"section"` // its ELF section, e.g. "kprobe/do_nanosleep"
	Type    string `json:"type"`    // cilium/ebpf's ProgramType, e.g. "Kprobe"
	Attach  string `json:"attach"`  // cilium/ebpf's AttachType, e.g. "TraceFEntry"
	Loaded  bool   `json:"loaded"`
	// Error is why it did not load: a CO-RE relocation error, or the
	// verifier's message (its last lines).
	Error string `json:"error,omitempty"`
	// Log is the end of the verifier's log when the verifier rejected
	// the program: it numbers the instruction it stopped at, to compare
	// with a prediction (predict.VerifierPoisonAt).
	Log []string `json:"log,omitempty"`
}

// KindProgramLoad is the record kind whose data is a ProgramLoad.
const KindProgramLoad = "program-load"

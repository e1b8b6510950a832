package vocab

//go:generate go tool stringer -type Verdict -linecomment

// Verdict is what a program is predicted to do on a kernel. Its word
// (String) is what the report's JSON carries, its number what the
// embedded verdicts carry (Fails 1, Unknown 2: programs that load have no
// row there).
type Verdict uint8

const (
	// Loads: no poisoned instruction can be reached, cilium/ebpf
	// relocates the program without error, and the kernel has what the
	// model checks beyond CO-RE (internal/predict's doc says what that
	// is, and what it does not check).
	Loads Verdict = iota // loads
	// Fails: cilium/ebpf refuses to relocate the program, the verifier
	// reaches a poisoned instruction, or the kernel lacks what the
	// program needs (a helper, map type, kfunc, its own BTF...).
	Fails // fails
	// Unknown: the analysis cannot decide; the reasons say why.
	Unknown // unknown
)

// ParseVerdict returns the verdict whose word is word, and false if no
// verdict's is: a report part or cache entry may hold any word.
func ParseVerdict(word string) (Verdict, bool) {
	for v := Loads; v <= Unknown; v++ {
		if v.String() == word {
			return v, true
		}
	}
	return 0, false
}

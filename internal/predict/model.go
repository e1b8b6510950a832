package predict

import (
	"regexp"
	"strconv"
)

// model is what the walk assumes the verifier of a kernel does, by the
// kernel's version. The versions are those of the upstream commits,
// rounded up where in doubt: an older verifier that decides less is
// modelled as deciding less, so the walk says Unknown rather than
// predict a guard works where it may not.
type model struct {
	globals globals
	jumps   jumps
	// narrowFill: a fill narrower than 8 bytes gives back the constant
	// spilled there (5.17, "bpf: Support <8-byte scalar spill and
	// refill"); before, the verifier forgets it.
	narrowFill bool
}

// jumps says which conditional jumps on known values the verifier
// decides.
type jumps uint8

const (
	// jumpsEqImm: JEQ and JNE of a constant register against an
	// immediate (4.x).
	jumpsEqImm jumps = iota
	// jumpsImm: every comparison against an immediate (5.0,
	// is_branch_taken).
	jumpsImm
	// jumpsAll: also against a register holding a constant, and a
	// pointer the verifier knows is not null against 0 (5.7).
	jumpsAll
)

// latest is the verifier of current kernels.
var latest = model{globals: globalsLazy, jumps: jumpsAll, narrowFill: true}

var releaseVersion = regexp.MustCompile(`^(\d+)\.(\d+)`)

// version is a kernel release's version as major*1000+minor
// ("6.1.0-47-amd64": 6001); ok is false when the release does not start
// with one.
func version(release string) (v int, ok bool) {
	m := releaseVersion.FindStringSubmatch(release)
	if m == nil {
		return 0, false
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || major > 1000 || minor >= 1000 {
		return 0, false
	}
	return major*1000 + minor, true
}

// modelFor is the model of the verifier of a kernel release
// ("6.1.0-47-amd64"). An unparsable release gets the most cautious
// model.
func modelFor(release string) model {
	v, ok := version(release)
	if !ok {
		return model{globals: globalsUnsure, jumps: jumpsEqImm}
	}
	out := model{globals: globalsLazy, jumps: jumpsAll, narrowFill: v >= 5017}
	switch {
	case v < 5000:
		out.jumps = jumpsEqImm
	case v < 5007:
		out.jumps = jumpsImm
	}
	// Linux 6.8 verifies a global function only where a call to it is
	// reached (commit 2afae08c9dcb, "bpf: Validate global subprogs
	// lazily"); from 5.6 every one, on its own; before, global
	// functions are followed like static ones.
	switch {
	case v < 5006:
		out.globals = globalsStatic
	case v < 6008:
		out.globals = globalsEager
	}
	return out
}

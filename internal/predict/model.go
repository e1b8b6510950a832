package predict

import (
	"regexp"
	"strconv"
	"sync"
)

// model is what the walk assumes the verifier of a kernel does, by the
// features its types show, and where they do not, by its release. The
// versions are those of the upstream commits, rounded up where in
// doubt: an older verifier that decides less is modelled as deciding
// less, so the walk says Unknown rather than predict a guard works where
// it may not.
type model struct {
	globals globals
	jumps   jumps
	// narrowFill: a fill narrower than 8 bytes gives back the constant
	// spilled there (5.17, "bpf: Support <8-byte scalar spill and
	// refill"); before, the verifier forgets it.
	narrowFill bool
	// jumpsWhy and fillWhy say, for a reason, what made the model's
	// jumps less than jumpsAll and narrowFill false (featureFact).
	jumpsWhy, fillWhy string
	// globalsWhy say what told of global functions and of their lazy
	// verification, where globals is globalsUnsure.
	globalsWhy [2]string
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

var releaseVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+)\.(\d+)`) })

// version is a kernel release's version as major*1000+minor
// ("6.1.0-47-amd64": 6001); ok is false when the release does not start
// with one.
func version(release string) (v int, ok bool) {
	m := releaseVersion().FindStringSubmatch(release)
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

// modelFor is the model of the verifier of a kernel: k's types decide
// what they show (features.go), the release ("6.1.0-47-amd64") the rest.
// With k nil the release decides all, and an unparsable one gets the
// most cautious model. With k, a release can only make the walk less
// sure: where the types do not decide when global functions are
// verified, it explores them both ways (globalsUnsure); an older
// verifier's undecided jumps and forgotten fills give Unknown, never
// Fails, since the walk marks the paths they open as maybe taken.
func modelFor(release string, k *Kernel) model {
	out := model{globals: globalsUnsure, jumps: jumpsEqImm}
	if ff := feature(k, release, FeatureBranchImm); ff.has {
		out.jumps = jumpsImm
	} else {
		out.jumpsWhy = ff.String()
	}
	if ff := feature(k, release, FeatureBranchReg); ff.has {
		out.jumps = jumpsAll
	} else if out.jumps == jumpsImm {
		out.jumpsWhy = ff.String()
	}
	if ff := feature(k, release, FeatureNarrowFill); ff.has {
		out.narrowFill = true
	} else {
		out.fillWhy = ff.String()
	}
	// Linux 6.8 verifies a global function only where a call to it is
	// reached (commit 2afae08c9dcb, "bpf: Validate global subprogs
	// lazily"); from 5.6 every one, on its own; before, global
	// functions are followed like static ones.
	funcs, lazy := feature(k, release, FeatureGlobalFuncs), feature(k, release, FeatureLazyGlobals)
	switch {
	case !funcs.known || !lazy.known || k != nil && (funcs.by == nil || lazy.by == nil):
		out.globalsWhy = [2]string{funcs.String(), lazy.String()}
	case !funcs.has:
		out.globals = globalsStatic
	case !lazy.has:
		out.globals = globalsEager
	default:
		out.globals = globalsLazy
	}
	return out
}

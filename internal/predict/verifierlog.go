package predict

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// verifierPoison is the verifier's log line for a poisoned instruction
// it rejects: "17: (85) call unknown#195896080" or
// "17: (18) r10 = 0xbad2310".
var verifierPoison = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`^(\d+): \((?:85\) call unknown#%d|18\) r10 = 0x%x)`, btf.COREBadRelocationSentinel, btf.COREBadRelocationSentinel))
})

// VerifierPoisonAt finds, in the lines of a verifier log, the poisoned
// instruction the verifier rejected, as a raw offset to compare with a
// Prediction's ReachedAt; ok is false when the log shows none.
func VerifierPoisonAt(log []string) (at int, ok bool) {
	at = -1
	for _, line := range log {
		if m := verifierPoison().FindStringSubmatch(line); m != nil {
			at, _ = strconv.Atoi(m[1])
		}
	}
	return at, at >= 0
}

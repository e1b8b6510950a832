package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestProgress: both forms count kernels, a skipped entry taken off the
// total, and give the rate in kernels/s only.
func TestProgress(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		var out bytes.Buffer
		p := newProgress(&out, terminal, 0)
		p.Total(4)
		p.Done("x86_64/a (debian 12)", nil)
		p.Skipped("/corpus/b.btf.tar.xz", errors.New("truncated"))
		p.Done("x86_64/c (debian 12)", errors.New("verification failed"))
		if terminal {
			// The bar renders at most every 100 ms.
			time.Sleep(150 * time.Millisecond)
		}
		p.Done("x86_64/d (debian 12)", nil)
		got := out.String()
		want := []string{"skipped /corpus/b.btf.tar.xz: truncated", "x86_64/c (debian 12): verification failed", " kernels/s"}
		if terminal {
			want = append(want, "(2/3)") // the bar clears itself at 3/3
		} else {
			want = append(want, "1/4 kernels", "3/3 kernels", "left")
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("terminal %v: output lacks %q:\n%q", terminal, w, got)
			}
		}
		if units := regexp.MustCompile(`kernels/(min|hr)|it/s`).FindString(got); units != "" {
			t.Errorf("terminal %v: rate given as %s:\n%q", terminal, units, got)
		}
	}
}

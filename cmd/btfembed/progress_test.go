package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestProgress(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		var out bytes.Buffer
		p := newProgress(&out, terminal, 0)
		p.Total(3)
		p.Done("x86_64/a (debian 12)", nil)
		p.Skipped("/corpus/b.btf.tar.xz", errors.New("truncated"))
		p.Done("x86_64/c (debian 12)", errors.New("verification failed"))
		got := out.String()
		want := []string{"skipped /corpus/b.btf.tar.xz: truncated", "x86_64/c (debian 12): verification failed"}
		if terminal {
			want = append(want, "kernels", "/3, ")
		} else {
			want = append(want, "1/3 kernels", "left")
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("terminal %v: output lacks %q:\n%q", terminal, w, got)
			}
		}
	}
}

package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "kernel", "0 kernels"},
		{1, "kernel", "1 kernel"},
		{2, "program", "2 programs"},
		{1, "distinct BTF blob", "1 distinct BTF blob"},
		{-1, "byte", "-1 bytes"},
	} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

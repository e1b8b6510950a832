package safetext

import "testing"

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"x86_64/6.1.0-47-amd64 (debian 12)", "x86_64/6.1.0-47-amd64 (debian 12)"},
		{`a"b\c`, `a"b\c`},
		{"x86\n_64", `x86\n_64`},
		{"\x1b[2Jrel\"", `\x1b[2Jrel\"`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"line\u2028sep", `line\u2028sep`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

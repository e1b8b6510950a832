package corpus

import "testing"

func TestNormalizeArch(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"x86_64", "x86_64", true},
		{"amd64", "x86_64", true},
		{"AArch64", "arm64", true},
		{"arm64", "arm64", true},
		{"ppc64el", "ppc64le", true},
		{"s390x", "s390x", true},
		{"loong64", "loongarch64", true},
		{"i686", "i386", true},
		{"vax", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := NormalizeArch(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeArch(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestKeyString(t *testing.T) {
	tests := []struct {
		key  Key
		want string
	}{
		{Key{"x86_64", "6.1.0-47-amd64", "debian", "12"}, "debian/12/x86_64/6.1.0-47-amd64"},
		{Key{Arch: "arm64", Release: "6.7.0"}, "unknown/unknown/arm64/6.7.0"},
	}
	for _, tt := range tests {
		if got := tt.key.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.key, got, tt.want)
		}
	}
}

package kernelkey

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
		{"riscv64", "riscv64", true},
		{"loong64", "loongarch64", true},
		{"i686", "i386", true},
		{"armv7l", "arm", true},
		{"vax", "vax", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := NormalizeArch(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeArch(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

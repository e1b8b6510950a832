package kernelarch

import (
	"encoding/binary"
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
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
		{"mips64le", "mips64el", true},
		{"i686", "i386", true},
		{"386", "i386", true},
		{"armv7l", "arm", true},
		{"mips", "mips", false},
		{"vax", "vax", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := Normalize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Normalize(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestArches checks that every canonical name normalizes to itself and
// that no spelling names two architectures.
func TestArches(t *testing.T) {
	names := Arches()
	if !slices.IsSorted(names) || len(names) != len(arches) {
		t.Fatalf("Arches() = %v, want %d names sorted", names, len(arches))
	}
	for _, name := range names {
		if got, ok := Normalize(name); got != name || !ok {
			t.Errorf("Normalize(%q) = %q, %v; want itself", name, got, ok)
		}
	}
	spellings := 0
	for _, a := range arches {
		spellings += 1 + len(a.aliases)
	}
	if len(archIndex()) != spellings {
		t.Errorf("%d spellings index %d entries: one names two architectures", spellings, len(archIndex()))
	}
	names[0] = "changed"
	if Arches()[0] == "changed" {
		t.Error("Arches returns its own slice")
	}
}

func TestByteOrder(t *testing.T) {
	tests := []struct {
		arch string
		want binary.ByteOrder
	}{
		{"x86_64", binary.LittleEndian},
		{"aarch64", binary.LittleEndian},
		{"ppc64", binary.BigEndian},
		{"ppc64le", binary.LittleEndian},
		{"s390x", binary.BigEndian},
		{"mips64el", binary.LittleEndian},
		{"mips", nil},
	}
	for _, tt := range tests {
		got, ok := ByteOrder(tt.arch)
		if got != tt.want || ok != (tt.want != nil) {
			t.Errorf("ByteOrder(%q) = %v, %v; want %v", tt.arch, got, ok, tt.want)
		}
	}
}

func TestOfGOARCH(t *testing.T) {
	for goarch, want := range map[string]string{
		"amd64": "x86_64", "arm64": "arm64", "386": "i386", "riscv64": "riscv64",
		"s390x": "s390x", "ppc64le": "ppc64le", "loong64": "loongarch64", "mips64le": "mips64el", "mips": "", "wasm": "",
	} {
		if got := OfGOARCH(goarch); got != want {
			t.Errorf("OfGOARCH(%s) = %q, want %q", goarch, got, want)
		}
	}
}

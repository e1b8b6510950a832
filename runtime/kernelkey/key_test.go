package kernelkey

import (
	"errors"
	"slices"
	"testing"
)

func TestKeyString(t *testing.T) {
	tests := []struct {
		key  Key
		want string
	}{
		{Key{"x86_64", "6.1.0-47-amd64", "debian", "12"}, "x86_64/6.1.0-47-amd64 (debian 12)"},
		{Key{Arch: "arm64", Release: "6.7.0"}, "arm64/6.7.0"},
		{Key{Arch: "arm64", Release: "6.7.0", Distro: "ubuntu"}, "arm64/6.7.0 (ubuntu)"},
	}
	for _, tt := range tests {
		if got := tt.key.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestKeyCompare(t *testing.T) {
	want := []Key{
		{Arch: "arm64", Release: "6.1"},
		{Arch: "x86_64", Release: "6.1"},
		{Arch: "x86_64", Release: "6.1", Distro: "debian", Version: "12"},
		{Arch: "x86_64", Release: "6.1", Distro: "debian", Version: "13"},
		{Arch: "x86_64", Release: "6.12", Distro: "aaa"},
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, Key.Compare)
	if !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
}

func TestValidatePathElement(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"6.1.0-47-amd64", true},
		{"6.12.118+deb12-amd64", true},
		{"5.15.0~rc1_x", true},
		{"x86_64", true},
		{"22.04", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../etc", false},
		{"a/b", false},
		{`a\b`, false},
		{"a b", false},
		{"a\x00", false},
		{"é", false},
	}
	for _, tt := range tests {
		err := ValidatePathElement(tt.in)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrBadPathElement) {
			t.Errorf("ValidatePathElement(%q) = %v, want ok=%v", tt.in, err, tt.ok)
		}
	}
}

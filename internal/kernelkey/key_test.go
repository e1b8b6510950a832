package kernelkey

import (
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

package corpus

import (
	"testing"

	"github.com/btfembed/btfembed/runtime/kernelkey"
)

func TestKernelFile(t *testing.T) {
	tests := []struct {
		name    string
		kind    entryKind
		release string
		ok      bool
	}{
		{"6.1.0-47-amd64.btf.tar.xz", kindBTFHub, "6.1.0-47-amd64", true},
		{"5.4.0-1.btf", kindRaw, "5.4.0-1", true},
		{"5.4.0-1.btf.zst", kindRaw, "5.4.0-1", true},
		{"vmlinuz-6.12.118+deb12-amd64", kindImage, "6.12.118+deb12-amd64", true},
		{"vmlinux", kindImage, "", true},
		{".btf", 0, "", false},
		{"README.md", 0, "", false},
		{"nf_conntrack.ko.xz", 0, "", false},
	}
	for _, tt := range tests {
		kind, rel, ok := kernelFile(tt.name)
		if kind != tt.kind || rel != tt.release || ok != tt.ok {
			t.Errorf("kernelFile(%q) = %v, %q, %v; want %v, %q, %v", tt.name, kind, rel, ok, tt.kind, tt.release, tt.ok)
		}
	}
}

func TestPathKey(t *testing.T) {
	tests := []struct {
		path, release string
		want          kernelkey.Key
	}{
		{"archive/ubuntu/22.04/x86_64/5.15.0-91-generic.btf.tar.xz", "5.15.0-91-generic", kernelkey.Key{Arch: "x86_64", Release: "5.15.0-91-generic", Distro: "ubuntu", Version: "22.04"}},
		{"debian/12/aarch64/6.1.0-57-arm64.btf", "6.1.0-57-arm64", kernelkey.Key{Arch: "arm64", Release: "6.1.0-57-arm64", Distro: "debian", Version: "12"}},
		{"unknown/unknown/arm64/6.7.0.btf.tar.xz", "6.7.0", kernelkey.Key{Arch: "arm64", Release: "6.7.0"}},
		{"x86_64/6.7.0.btf", "6.7.0", kernelkey.Key{Arch: "x86_64", Release: "6.7.0"}},
		{"images/vmlinuz-6.7.0", "6.7.0", kernelkey.Key{Release: "6.7.0"}},
	}
	for _, tt := range tests {
		if got := pathKey(tt.path, tt.release); got != tt.want {
			t.Errorf("pathKey(%q) = %+v, want %+v", tt.path, got, tt.want)
		}
	}
}

package corpus

import (
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
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

// TestPathKey reads keys from paths: the BTFHub layout's, and others
// whose directories must not be taken for one, such as the shared
// corpus's nobtf/x86_64/, once read as distro "corpus", version "nobtf".
func TestPathKey(t *testing.T) {
	tests := []struct {
		path    string
		kind    entryKind
		release string
		want    kernelkey.Key
	}{
		{"archive/ubuntu/22.04/x86_64/5.15.0-91-generic.btf.tar.xz", kindBTFHub, "5.15.0-91-generic", kernelkey.Key{Arch: "x86_64", Release: "5.15.0-91-generic", Distro: "ubuntu", Version: "22.04"}},
		{"/work/shared/corpus/btfhub/debian/11/x86_64/5.10.0-32-amd64.btf.tar.xz", kindBTFHub, "5.10.0-32-amd64", kernelkey.Key{Arch: "x86_64", Release: "5.10.0-32-amd64", Distro: "debian", Version: "11"}},
		{"debian/12/aarch64/6.1.0-57-arm64.btf", kindRaw, "6.1.0-57-arm64", kernelkey.Key{Arch: "arm64", Release: "6.1.0-57-arm64", Distro: "debian", Version: "12"}},
		{"sles/15.3/s390x/5.3.18-57-default.btf.tar.xz", kindBTFHub, "5.3.18-57-default", kernelkey.Key{Arch: "s390x", Release: "5.3.18-57-default", Distro: "sles", Version: "15.3"}},
		{"unknown/unknown/arm64/6.7.0.btf.tar.xz", kindBTFHub, "6.7.0", kernelkey.Key{Arch: "arm64", Release: "6.7.0"}},
		{"x86_64/6.7.0.btf", kindRaw, "6.7.0", kernelkey.Key{Arch: "x86_64", Release: "6.7.0"}},
		// Not a version, not a distribution: the arch directory alone
		// names a raw BTF file's arch, which nothing else can.
		{"/work/shared/corpus/nobtf/x86_64/6.1.176.btf.tar.xz", kindBTFHub, "6.1.176", kernelkey.Key{Arch: "x86_64", Release: "6.1.176"}},
		{"home/Me/12/x86_64/6.7.0.btf", kindRaw, "6.7.0", kernelkey.Key{Arch: "x86_64", Release: "6.7.0"}},
		// An image tells its own key: the banner, the ELF machine.
		{"/work/shared/corpus/nobtf/x86_64/vmlinux-6.1.176.xz", kindImage, "6.1.176", kernelkey.Key{Release: "6.1.176"}},
		{"debian/12/x86_64/vmlinuz-6.1.0-47-amd64", kindImage, "6.1.0-47-amd64", kernelkey.Key{Release: "6.1.0-47-amd64"}},
		{"images/vmlinuz-6.7.0", kindImage, "6.7.0", kernelkey.Key{Release: "6.7.0"}},
	}
	for _, tt := range tests {
		if got := pathKey(tt.path, tt.kind, tt.release); got != tt.want {
			t.Errorf("pathKey(%q) = %+v, want %+v", tt.path, got, tt.want)
		}
	}
}

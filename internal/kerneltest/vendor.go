package kerneltest

import (
	"path/filepath"
	"testing"
)

// VendorRelease is the release of the vendor-released kernel of
// testdata/vendorkernel: Debian 12's Linux 6.1 built without BTF under
// CentOS 8.4's release number (scripts/build-kernel-vendor.sh), as
// vendors ship backported BPF under old numbers.
const VendorRelease = "4.18.0-305.el8.x86_64"

// VendorDir is testdata/vendorkernel: the vendor-released kernel's image
// (vmlinuz-<release>), its config, and its BTF, made by btfembed's corpus
// import from its DWARF, in BTFHub-archive layout under btfhub/.
func VendorDir() string { return filepath.Join(Dir(), "vendorkernel") }

// Vendor returns the vendor-released kernel's BTF (made from its DWARF).
func Vendor(tb testing.TB) Kernel {
	tb.Helper()
	rel := "centos/8/x86_64/" + VendorRelease
	path := filepath.Join(VendorDir(), "btfhub", filepath.FromSlash(rel)+".btf.tar.xz")
	raw, err := readArchive(path)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return Kernel{Name: rel, Arch: "x86_64", Release: VendorRelease, BTF: raw}
}

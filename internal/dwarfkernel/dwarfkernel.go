// Package dwarfkernel gives tests the BTF of kernels built without it,
// made from their DWARF the way a user makes it, through `btfembed corpus
// import` (corpus.Import, which runs pahole), and cached by the digest of
// the DWARF input (kerneltest.Derived): pahole takes 30 s for the shared
// corpus's nobtf vmlinux and 40 s for Debian's 686-pae on a busy 2-core
// machine. The VM field test boots these kernels; package predict's tests
// predict on them.
package dwarfkernel

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// NoBTFKey is the key of the shared corpus's kernel built without BTF
// (nobtf/x86_64, see its README), whose DWARF vmlinux is NoBTFVMLinux.
var NoBTFKey = kernelkey.Key{Distro: "debian", Version: "12", Arch: "x86_64", Release: "6.1.176"}

// NoBTFVMLinux is that kernel's xz-compressed DWARF vmlinux, relative to
// the shared corpus.
const NoBTFVMLinux = "nobtf/x86_64/vmlinux-6.1.176.xz"

// Entry returns the corpus file (a BTFHub archive) that importing the
// DWARF in input gives for key: a vmlinux with DWARF, xz-compressed, or a
// Debian -dbg package, whose modules are left out.
func Entry(ctx context.Context, input string, key kernelkey.Key) ([]byte, error) {
	what := fmt.Sprintf("%s-%s-%s-%s.btf.tar.xz", key.Distro, key.Version, key.Arch, key.Release)
	return kerneltest.Derived(input, what, func() ([]byte, error) {
		out, err := os.MkdirTemp("", "btfembed-dwarf-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(out)
		res, err := corpus.Import(ctx, out, []string{input}, &corpus.ImportOptions{Key: key, Strict: true, NoModules: true})
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", input, err)
		}
		if len(res.Kernels) != 1 {
			return nil, fmt.Errorf("import %s: %d kernels, want 1", input, len(res.Kernels))
		}
		return os.ReadFile(res.Kernels[0].File)
	})
}

// Kernel is Entry's raw vmlinux BTF as a test kernel. It skips the test
// under -short: a first run takes pahole's tens of seconds.
func Kernel(tb testing.TB, input string, key kernelkey.Key) kerneltest.Kernel {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: making BTF from DWARF with pahole takes tens of seconds")
	}
	archive, err := Entry(tb.Context(), input, key)
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := kerneltest.UnpackArchive(archive)
	if err != nil {
		tb.Fatalf("%s: %v", input, err)
	}
	return kerneltest.Kernel{Name: key.String(), Arch: key.Arch, Release: key.Release, BTF: raw}
}

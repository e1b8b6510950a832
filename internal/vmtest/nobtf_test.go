package vmtest_test

import (
	"context"
	"fmt"
	"os"

	"github.com/btfembed/btfembed/generator/corpus"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/runtime/kernelkey"
)

// Kernels built without BTF have none anywhere until someone makes it
// from their DWARF with pahole, as BTFHub does. The field test imports
// theirs into its corpus the way a user would, through `btfembed corpus
// import` (corpus.Import), and caches the imported entry by the digest of
// the DWARF input (kerneltest.Derived): pahole takes 30 s for nobtf's
// vmlinux and 40 s for the 686-pae's on a busy 2-core machine.

// nobtfDir is the corpus's kernel without BTF (see its README).
const nobtfDir = "nobtf/x86_64"

// dwarfEntry returns the corpus file (a BTFHub archive) that importing
// the DWARF in input gives for key: a vmlinux with DWARF, xz-compressed,
// or a Debian -dbg package, whose modules are left out.
func dwarfEntry(ctx context.Context, input string, key kernelkey.Key) ([]byte, error) {
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

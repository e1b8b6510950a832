package vmtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

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
// or a Debian -dbg package.
func dwarfEntry(ctx context.Context, input string, key kernelkey.Key) ([]byte, error) {
	what := fmt.Sprintf("%s-%s-%s-%s.btf.tar.xz", key.Distro, key.Version, key.Arch, key.Release)
	return kerneltest.Derived(input, what, func() ([]byte, error) {
		tmp, err := os.MkdirTemp("", "btfembed-dwarf-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		raw, err := paholeBTF(ctx, tmp, input, key.Release)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(tmp, "corpus")
		res, err := corpus.Import(ctx, out, []string{raw}, &corpus.ImportOptions{Key: key, Strict: true})
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", input, err)
		}
		if len(res.Kernels) != 1 {
			return nil, fmt.Errorf("import %s: %d kernels, want 1", input, len(res.Kernels))
		}
		return os.ReadFile(res.Kernels[0].File)
	})
}

// paholeBTF makes raw BTF from input's DWARF with pahole, with the flags
// of Debian's 6.1 kernel builds, and returns its path under tmp.
func paholeBTF(ctx context.Context, tmp, input, release string) (string, error) {
	vmlinux := filepath.Join(tmp, "vmlinux")
	var unpack *exec.Cmd
	switch {
	case strings.HasSuffix(input, ".xz"):
		unpack = exec.CommandContext(ctx, "sh", "-c", `xz -dc "$1" > "$2"`, "sh", input, vmlinux)
	case strings.HasSuffix(input, ".deb"):
		member := "./usr/lib/debug/boot/vmlinux-" + release
		unpack = exec.CommandContext(ctx, "sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -xO --occurrence=1 "$2" > "$3"`, "sh", input, member, vmlinux)
	default:
		return "", fmt.Errorf("%s: not a vmlinux.xz or a -dbg package", input)
	}
	if msg, err := unpack.CombinedOutput(); err != nil {
		return "", fmt.Errorf("unpack the vmlinux of %s: %w: %s", input, err, msg)
	}
	raw := filepath.Join(tmp, release+".btf")
	cmd := exec.CommandContext(ctx, "pahole", "-F", "dwarf", "--btf_gen_floats", "-j", "--lang_exclude=rust", "--btf_encode_detached", raw, vmlinux)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("pahole on the vmlinux of %s: %w: %s", input, err, msg)
	}
	return raw, nil
}

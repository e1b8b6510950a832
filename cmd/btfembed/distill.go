package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/mapfile"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

const distillUsage = `Usage: btfembed distill [-layout-compatible] -B <base> <module> <out.base.btf> <out.split.btf>

Separates a kernel module's split BTF from the vmlinux BTF it was built
over, like libbpf's btf__distill_base: <out.base.btf> gets the distilled
base (the named vmlinux types the module refers to, by name and, where the
module embeds them, size) and <out.split.btf> the module's BTF over it,
which "btfembed relocate" can later move onto another vmlinux.

<module> is a module (.ko, .ko.xz, .ko.gz, .ko.zst) or its raw split BTF.
<base> is the vmlinux BTF in any form "btfembed min" reads (raw BTF, a
BTFHub archive, an ELF vmlinux, a kernel image). A module that already
carries a distilled base (.BTF.base, pahole 1.28+) is first relocated onto
<base>; -layout-compatible applies to that step.

Flags:
`

// runDistill is "btfembed distill".
func runDistill(stdout, stderr io.Writer, args []string) error {
	return withBase(stderr, args, "distill", distillUsage, "vmlinux `BTF` the module was built over (required)",
		"relocate a module's own .BTF.base onto -B accepting layout-compatible differences",
		func(files *mapfile.Mapped, base *rawbtf.Spec, basePath string, layout bool, args []string) error {
			return distillModule(stdout, files, base, basePath, layout, args[0], args[1], args[2])
		})
}

// distillModule is "btfembed distill" once its base is read.
func distillModule(stdout io.Writer, files *mapfile.Mapped, base *rawbtf.Spec, basePath string, layout bool, modPath, outBase, outSplit string) error {
	split, err := readModuleSplit(files, modPath, base, layout)
	if err != nil {
		return fmt.Errorf("distill: %w (is -B %s the vmlinux it was built over?)", err, basePath)
	}
	vmlinux, err := distill.NewBase(base.Raw())
	if err != nil {
		return fmt.Errorf("distill: %s: %w", basePath, err)
	}
	distBase, newSplit, err := distill.Distill(split.Raw(), vmlinux)
	if err != nil {
		return fmt.Errorf("distill: %s: %w", modPath, err)
	}
	db, err := rawbtf.Parse(distBase, nil)
	if err != nil {
		return fmt.Errorf("distill: distilled base: %w", err)
	}
	ns, err := rawbtf.Parse(newSplit, db)
	if err != nil {
		return fmt.Errorf("distill: new split: %w", err)
	}
	if err := files.Unchanged(); err != nil {
		return fmt.Errorf("distill: %w", err)
	}
	var out atomicfile.Set
	defer out.Abort()
	if err := out.AddBytes(outBase, distBase); err != nil {
		return fmt.Errorf("distill: %w", err)
	}
	if err := out.AddBytes(outSplit, newSplit); err != nil {
		return fmt.Errorf("distill: %w", err)
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("distill: %w", err)
	}
	own := split.NextID() - split.FirstID()
	fmt.Fprintf(stdout, "%s: %d distilled base types (%d bytes), %d split types (%d copied from the base, %d bytes)\n",
		modPath, db.NextID()-1, len(distBase), ns.NextID()-ns.FirstID(), ns.NextID()-ns.FirstID()-own, len(newSplit))
	return nil
}

// readModuleSplit reads a module's split BTF over base. A module with its
// own distilled base is relocated onto base first.
func readModuleSplit(files *mapfile.Mapped, path string, base *rawbtf.Spec, layout bool) (*rawbtf.Spec, error) {
	m, err := readFile(files, path)
	if err != nil {
		return nil, err
	}
	split, err := moduleOver(m, base, layout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return split, nil
}

// moduleOver returns a module's split BTF over base, relocating it from its
// own distilled base when it has one.
func moduleOver(m *corpus.File, base *rawbtf.Spec, layout bool) (*rawbtf.Spec, error) {
	if m.Base == nil {
		return rawbtf.Parse(m.BTF, base)
	}
	ownBase, err := rawbtf.Parse(m.Base, nil)
	if err != nil {
		return nil, fmt.Errorf(".BTF.base: %w", err)
	}
	own, err := rawbtf.Parse(m.BTF, ownBase)
	if err != nil {
		return nil, fmt.Errorf(".BTF over .BTF.base: %w", err)
	}
	newBase, err := distill.NewBase(base.Raw())
	if err != nil {
		return nil, err
	}
	raw, err := distill.Relocate(own.Raw(), ownBase.Raw(), newBase, &distill.RelocateOptions{LayoutCompatible: layout})
	if err != nil {
		return nil, fmt.Errorf("relocate onto -B: %w", err)
	}
	return rawbtf.Parse(raw, base)
}

const relocateUsage = `Usage: btfembed relocate [-layout-compatible] -B <new-base> <distilled.base.btf> <split.btf> <out.btf>

Moves split BTF over a distilled base (from "btfembed distill", or a
module's .BTF.base and .BTF) onto another vmlinux BTF, like libbpf's
btf__relocate: <out.btf> is split BTF over <new-base>. Every distilled type
that has no single match in <new-base> is listed, with the reason.

<new-base> is read like distill's -B. <split.btf> is raw split BTF or a
module whose .BTF section is split over <distilled.base.btf>.

Flags:
`

// runRelocate is "btfembed relocate".
func runRelocate(stdout, stderr io.Writer, args []string) error {
	return withBase(stderr, args, "relocate", relocateUsage, "vmlinux `BTF` to relocate onto (required)",
		"also accept differences that cannot change the module's memory layout (char signedness; size of types it only points to)",
		func(files *mapfile.Mapped, newBase *rawbtf.Spec, basePath string, layout bool, args []string) error {
			return relocateSplit(stdout, stderr, files, newBase, basePath, layout, args[0], args[1], args[2])
		})
}

// relocateSplit is "btfembed relocate" once its new base is read.
func relocateSplit(stdout, stderr io.Writer, files *mapfile.Mapped, newBase *rawbtf.Spec, basePath string, layout bool, distPath, splitPath, outPath string) error {
	distBase, err := readBTF(files, distPath, nil)
	if err != nil {
		return fmt.Errorf("relocate: distilled base: %w", err)
	}
	split, err := readBTF(files, splitPath, distBase)
	if err != nil {
		return fmt.Errorf("relocate: %w (is %s its distilled base?)", err, distPath)
	}
	target, err := distill.NewBase(newBase.Raw())
	if err != nil {
		return fmt.Errorf("relocate: %s: %w", basePath, err)
	}
	out, err := distill.Relocate(split.Raw(), distBase.Raw(), target, &distill.RelocateOptions{LayoutCompatible: layout})
	var ue *distill.UnmappedError
	if errors.As(err, &ue) {
		types := ue.Types()
		for _, u := range types {
			fmt.Fprintf(stderr, "btfembed relocate: %s: %s\n", splitPath, u)
		}
		hint := ""
		if ue.LayoutCompatible() {
			hint = "; -layout-compatible would map them all"
		}
		return fmt.Errorf("relocate: %s onto %s: %d of %d distilled base types do not map%s",
			splitPath, basePath, len(types), ue.Total(), hint)
	}
	if err != nil {
		return fmt.Errorf("relocate: %s onto %s: %w", splitPath, basePath, err)
	}
	if err := files.Unchanged(); err != nil {
		return fmt.Errorf("relocate: %w", err)
	}
	if err := atomicfile.WriteFile(outPath, out); err != nil {
		return fmt.Errorf("relocate: %w", err)
	}
	fmt.Fprintf(stdout, "%s: %d split types over %s (%d bytes)\n", outPath, split.NextID()-split.FirstID(), basePath, len(out))
	return nil
}

// withBase runs a command that works over a vmlinux BTF given with -B
// (distill, relocate): it parses args, requiring -B and three arguments,
// and calls run with the files mapped, -B read and the three arguments.
func withBase(stderr io.Writer, args []string, name, usage, baseHelp, layoutHelp string,
	run func(files *mapfile.Mapped, base *rawbtf.Spec, basePath string, layout bool, args []string) error) error {
	fs := newFlagSet(name, usage, stderr)
	basePath := fs.String("B", "", baseHelp)
	layout := fs.Bool("layout-compatible", false, layoutHelp)
	if err := parseDistillFlags(fs, args, 3); err != nil {
		return err
	}
	return withMapped(func(files *mapfile.Mapped) error {
		base, err := readBTF(files, *basePath, nil)
		if err != nil {
			return fmt.Errorf("%s: -B: %w", name, err)
		}
		return run(files, base, *basePath, *layout, fs.Args())
	})
}

// parseDistillFlags parses args, requiring -B and n positional arguments.
func parseDistillFlags(fs *flag.FlagSet, args []string, n int) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.Lookup("B").Value.String() == "" {
		fs.Usage()
		return usagef("%s: -B is required", fs.Name())
	}
	if fs.NArg() != n {
		fs.Usage()
		return usagef("%s: want %d arguments, got %d", fs.Name(), n, fs.NArg())
	}
	return nil
}

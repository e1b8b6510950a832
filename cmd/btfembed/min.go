package main

import (
	"fmt"
	"io"

	"github.com/btfembed/btfembed/corereloc"
	"github.com/btfembed/btfembed/generator/corpus"
	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/regfile"
)

const minUsage = `Usage: btfembed min [-B base] <kernel-btf> <out.btf> <obj>...

Writes to <out.btf> the smallest BTF that resolves every CO-RE relocation
of the BPF objects exactly as <kernel-btf> does, like
"bpftool gen min_core_btf" with the same arguments. A relocation that fails
on this kernel (no candidate, ambiguity) is reported and fails the same way
with the output.

<kernel-btf> is raw BTF (/sys/kernel/btf/vmlinux, .btf, .btf.xz, .btf.zst,
.btf.gz), a BTFHub archive (<release>.btf.tar.xz), an ELF file with a .BTF
section (vmlinux, a module's .ko, .ko.xz, .ko.zst, .ko.gz) or a kernel
image (bzImage, Image, Image.gz, EFI zboot).

With -B, <kernel-btf> is a module's split BTF over the base <base> (the
full vmlinux BTF it was built against). Both are minimized together:
<out.btf> is the module's split BTF over the minimized base, which is
written to <out.btf>.base.

Flags:
`

// runMin is "btfembed min".
func runMin(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("min", minUsage, stderr)
	base := fs.String("B", "", "`base` BTF the kernel BTF is split over (module BTF)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 3 {
		fs.Usage()
		return usagef("min: want <kernel-btf>, <out.btf> and at least one object")
	}
	kernelPath, outPath, objPaths := fs.Arg(0), fs.Arg(1), fs.Args()[2:]
	deferCollection(minFirstCollection)
	return withMapped(func(files *regfile.Mapped) error {
		return minimize(stderr, files, kernelPath, outPath, *base, objPaths)
	})
}

// withMapped runs a command that reads its kernel BTF files with readFile,
// which maps them (regfile.Mapped) rather than reading them: every use of
// them is in f, under files.Guard, and f checks files.Unchanged before it
// writes anything.
func withMapped(f func(files *regfile.Mapped) error) error {
	var files regfile.Mapped
	return files.Guard(func() error { return f(&files) })
}

// minimize is "btfembed min" once its arguments are parsed.
func minimize(stderr io.Writer, files *regfile.Mapped, kernelPath, outPath, base string, objPaths []string) error {
	objs, err := corereloc.Load(objPaths...)
	if err != nil {
		return fmt.Errorf("min: %w", err)
	}
	for _, o := range objs {
		if len(o.Sites) == 0 {
			fmt.Fprintf(stderr, "btfembed min: warning: %s: no CO-RE relocations (no .BTF.ext records): it needs no kernel BTF\n", o.Path)
		}
	}
	var targets []*corereloc.Target
	if base != "" {
		b, err := readTarget(files, base, nil)
		if err != nil {
			return fmt.Errorf("min: base: %w", err)
		}
		targets = append(targets, b)
	}
	var split *corereloc.Target
	if len(targets) > 0 {
		split = targets[0]
	}
	k, err := readTarget(files, kernelPath, split)
	if err != nil && base != "" {
		return fmt.Errorf("min: %w (is -B %s the vmlinux it was built over?)", err, base)
	} else if err != nil {
		return fmt.Errorf("min: %w", err)
	}
	targets = append(targets, k)

	res, err := corereloc.Match(objs, targets)
	if err != nil {
		return fmt.Errorf("min: %s: %w", kernelPath, err)
	}
	for ref, o := range res.Sites() {
		if o.Status == corereloc.Ambiguous || o.Status == corereloc.Failed {
			fmt.Fprintf(stderr, "btfembed min: %s: %s: %v\n", kernelPath, res.Objects[ref.Object].SiteString(ref.Site), o.Err)
		}
	}
	vmlinux, modules, err := corereloc.Minimize(res)
	if err != nil {
		return fmt.Errorf("min: %s: %w", kernelPath, err)
	}
	if err := files.Unchanged(); err != nil {
		return fmt.Errorf("min: %w", err)
	}
	if base == "" {
		return atomicfile.WriteFile(outPath, vmlinux)
	}
	// Both files or neither: a split BTF beside a base it does not fit is
	// worse than no output.
	var out atomicfile.Set
	defer out.Abort()
	if err := out.AddBytes(outPath+".base", vmlinux); err != nil {
		return err
	}
	if err := out.AddBytes(outPath, modules[0]); err != nil {
		return err
	}
	return out.Commit()
}

// readFile maps a file with BTF in any form package corpus reads (see
// withMapped) and finds its BTF; errors name the file.
func readFile(files *regfile.Mapped, path string) (*corpus.File, error) {
	data, err := files.Map(path, extract.MaxImage)
	if err != nil {
		return nil, err
	}
	return corpus.ParseBTF(path, data)
}

// readBTF reads the BTF of a file with readFile and parses it, split over
// base if not nil; errors name the file.
func readBTF(files *regfile.Mapped, path string, base *rawbtf.Spec) (*rawbtf.Spec, error) {
	return readParsed(files, path, func(raw []byte) (*rawbtf.Spec, error) { return rawbtf.Parse(raw, base) })
}

// readTarget reads the BTF of a file with readFile and parses it for
// Match, split over base if not nil; errors name the file.
func readTarget(files *regfile.Mapped, path string, base *corereloc.Target) (*corereloc.Target, error) {
	return readParsed(files, path, func(raw []byte) (*corereloc.Target, error) { return corereloc.NewTarget(raw, base) })
}

// readParsed reads the BTF of a file with readFile and parses it with
// parse; errors name the file.
func readParsed[T any](files *regfile.Mapped, path string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	f, err := readFile(files, path)
	if err != nil {
		return zero, err
	}
	t, err := parse(f.BTF)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

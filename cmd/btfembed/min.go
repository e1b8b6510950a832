package main

import (
	"fmt"
	"io"

	"github.com/btfembed/btfembed/corereloc"
	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/mapfile"
	"github.com/btfembed/btfembed/internal/rawbtf"
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
	return withMapped(func(files *mapfile.Mapped) error {
		return minimize(stderr, files, kernelPath, outPath, *base, objPaths)
	})
}

// withMapped runs a command that reads its kernel BTF files with readFile,
// which maps them (mapfile.Mapped) rather than reading them: every use of
// them is in f, under files.Guard, and f checks files.Unchanged before it
// writes anything.
func withMapped(f func(files *mapfile.Mapped) error) error {
	var files mapfile.Mapped
	return files.Guard(func() error { return f(&files) })
}

// minimize is "btfembed min" once its arguments are parsed.
func minimize(stderr io.Writer, files *mapfile.Mapped, kernelPath, outPath, base string, objPaths []string) error {
	objs, err := corereloc.Load(objPaths...)
	if err != nil {
		return fmt.Errorf("min: %w", err)
	}
	for _, o := range objs {
		if o.Relocations() == 0 {
			fmt.Fprintf(stderr, "btfembed min: warning: %s: no CO-RE relocations (no .BTF.ext records): it needs no kernel BTF\n", o.Path())
		}
	}
	// Without -B the kernel's BTF is vmlinux BTF; with it, a module's
	// split BTF over the base.
	vmlinuxPath, modules := kernelPath, []string(nil)
	if base != "" {
		vmlinuxPath, modules = base, []string{kernelPath}
	}
	vmlinux, err := readFile(files, vmlinuxPath)
	if err != nil {
		return fmt.Errorf("min: %w", err)
	}
	var moduleBTF [][]byte
	for _, path := range modules {
		m, err := readFile(files, path)
		if err != nil {
			return fmt.Errorf("min: %w", err)
		}
		moduleBTF = append(moduleBTF, m.BTF)
	}
	min, err := corereloc.Minimize(objs, vmlinux.BTF, moduleBTF...)
	if err != nil && base != "" {
		return fmt.Errorf("min: %s: %w (is -B %s the vmlinux it was built over?)", kernelPath, err, base)
	} else if err != nil {
		return fmt.Errorf("min: %s: %w", kernelPath, err)
	}
	for _, err := range min.Unresolved {
		fmt.Fprintf(stderr, "btfembed min: %s: %v\n", kernelPath, err)
	}
	if err := files.Unchanged(); err != nil {
		return fmt.Errorf("min: %w", err)
	}
	if base == "" {
		return atomicfile.WriteFile(outPath, min.VMLinux)
	}
	// Both files or neither: a split BTF beside a base it does not fit is
	// worse than no output.
	var out atomicfile.Set
	defer out.Abort()
	if err := out.AddBytes(outPath+".base", min.VMLinux); err != nil {
		return err
	}
	if err := out.AddBytes(outPath, min.Modules[0]); err != nil {
		return err
	}
	return out.Commit()
}

// readFile maps a file with BTF in any form package corpus reads (see
// withMapped) and finds its BTF; errors name the file.
func readFile(files *mapfile.Mapped, path string) (*corpus.File, error) {
	data, err := files.Map(path, extract.MaxImage)
	if err != nil {
		return nil, err
	}
	return corpus.ParseBTF(path, data)
}

// readBTF reads the BTF of a file with readFile and parses it, split over
// base if not nil; errors name the file.
func readBTF(files *mapfile.Mapped, path string, base *rawbtf.Spec) (*rawbtf.Spec, error) {
	return readParsed(files, path, func(raw []byte) (*rawbtf.Spec, error) { return rawbtf.Parse(raw, base) })
}

// readParsed reads the BTF of a file with readFile and parses it with
// parse; errors name the file.
func readParsed[T any](files *mapfile.Mapped, path string, parse func([]byte) (T, error)) (T, error) {
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

package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/corereloc"
	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

const minUsage = `usage: btfembed min [-B base] <kernel-btf> <out.btf> <obj>...

Writes to <out.btf> the smallest BTF that resolves every CO-RE relocation
of the BPF objects exactly as <kernel-btf> does, like
"bpftool gen min_core_btf" with the same arguments. A relocation that fails
on this kernel (no candidate, ambiguity) is reported and fails the same way
with the output.

<kernel-btf> is raw BTF (/sys/kernel/btf/vmlinux), an ELF file with a .BTF
section (vmlinux, a module's .ko), either xz-compressed, or a BTFHub
archive (<release>.btf.tar.xz).

With -B, <kernel-btf> is a module's split BTF over the base <base> (the
full vmlinux BTF it was built against). Both are minimized together:
<out.btf> is the module's split BTF over the minimized base, which is
written to <out.btf>.base.

Flags:
`

// runMin is "btfembed min".
func runMin(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("min", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("B", "", "`base` BTF the kernel BTF is split over (module BTF)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), minUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("min: %w: %v", errUsage, err)
	}
	if fs.NArg() < 3 {
		fs.Usage()
		return fmt.Errorf("min: %w: want <kernel-btf>, <out.btf> and at least one object", errUsage)
	}
	kernelPath, outPath, objPaths := fs.Arg(0), fs.Arg(1), fs.Args()[2:]

	objs, err := corereloc.Load(objPaths...)
	if err != nil {
		return fmt.Errorf("min: %w", err)
	}
	var targets []*rawbtf.Spec
	if *base != "" {
		b, err := readKernelBTF(*base, nil)
		if err != nil {
			return fmt.Errorf("min: %w", err)
		}
		targets = append(targets, b)
	}
	var split *rawbtf.Spec
	if len(targets) > 0 {
		split = targets[0]
	}
	k, err := readKernelBTF(kernelPath, split)
	if err != nil {
		return fmt.Errorf("min: %w", err)
	}
	targets = append(targets, k)

	res, err := corereloc.Match(objs, targets)
	if err != nil {
		return fmt.Errorf("min: %s: %w", kernelPath, err)
	}
	for i, obj := range res.Objects {
		for j, o := range res.Outcomes[i] {
			if o.Status == corereloc.Ambiguous || o.Status == corereloc.Failed {
				fmt.Fprintf(stderr, "btfembed min: %s: %v: %v\n", kernelPath, &obj.Relocations[j], o.Err)
			}
		}
	}
	vmlinux, modules, err := corereloc.Minimize(res)
	if err != nil {
		return fmt.Errorf("min: %s: %w", kernelPath, err)
	}
	if *base == "" {
		return atomicfile.WriteFile(outPath, vmlinux)
	}
	if err := atomicfile.WriteFile(outPath+".base", vmlinux); err != nil {
		return err
	}
	return atomicfile.WriteFile(outPath, modules[0])
}

// readKernelBTF reads raw BTF, the .BTF section of an ELF file (vmlinux,
// a module), either of them xz-compressed, or the one file of a BTFHub
// .btf.tar.xz archive, split over base if not nil.
func readKernelBTF(path string, base *rawbtf.Spec) (*rawbtf.Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, xzMagic) {
		data, err = unxz(data)
	}
	if err == nil && bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		data, err = elfBTF(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	spec, err := rawbtf.Parse(data, base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

// xzMagic starts an xz stream.
var xzMagic = []byte{0xfd, '7', 'z', 'X', 'Z', 0}

func elfBTF(data []byte) (_ []byte, err error) {
	defer func() {
		if p := recover(); p != nil { // debug/elf panics on some bad input
			err = fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	sec := f.Section(".BTF")
	if sec == nil {
		return nil, errors.New("ELF file without .BTF section")
	}
	if sec.Type == elf.SHT_NOBITS || sec.Offset > uint64(len(data)) || sec.Size > uint64(len(data))-sec.Offset {
		return nil, errors.New("section .BTF: no data in the file")
	}
	return data[sec.Offset : sec.Offset+sec.Size], nil
}

// unxz decompresses data; if it is a tar archive (BTFHub's
// <release>.btf.tar.xz), it returns its first regular file.
func unxz(data []byte) ([]byte, error) {
	zr, err := xz.NewReader(bytes.NewReader(data), 0)
	if err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	// A tar header has "ustar" at offset 257.
	if len(out) < 262 || string(out[257:262]) != "ustar" {
		return out, nil
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, errors.New("tar archive without a file")
		}
		if err != nil {
			return nil, fmt.Errorf("tar: %w", err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("tar member %s: %w", h.Name, err)
			}
			return b, nil
		}
	}
}

package corpus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/pahole"
)

// emitDWARF imports one kernel through importDWARF and hands it, and the
// modules it skipped, to emit.
func emitDWARF(ctx context.Context, in string, emit func(*Kernel, error), opts *ImportOptions, read dwarfReader) {
	k, skipped, err := importDWARF(ctx, in, read, opts)
	for _, e := range skipped {
		emit(nil, e)
	}
	emit(k, err)
}

// readDebugDeb streams a Debian debug package's vmlinux and modules into
// dir, telling found of each.
func readDebugDeb(in, dir string, found func(extract.DWARFFile) error, opts *ImportOptions) (*dwarfInput, error) {
	f, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := extract.ReadDebDWARF(bufio.NewReaderSize(f, 1<<16), extract.DWARFOptions{Dir: dir, NoModules: opts != nil && opts.NoModules, Found: found})
	if err != nil {
		return nil, err
	}
	arch, _ := kernelkey.NormalizeArch(d.Control.Architecture)
	dv, err := dwarfPackage(in, d.VMLinux, d.Modules, func(release string) told {
		return told{key: kernelkey.Key{Arch: arch, Release: release}}
	}, opts)
	if err != nil {
		return nil, err
	}
	dv.Fallback = debDistro(d.Control)
	return dv, nil
}

// dwarfPackage makes the dwarfInput of a debug package's files streamed
// to disk: its one vmlinux (several must be of one release), keyed by
// key, with the modules of that release; modules of another release are
// warned about (ImportOptions.Warn).
func dwarfPackage(in string, vmlinux, modules []extract.DWARFFile, key func(release string) told, opts *ImportOptions) (*dwarfInput, error) {
	if len(vmlinux) == 0 {
		return nil, fmt.Errorf("%w: debug package without usr/lib/debug/boot/vmlinux-* or usr/lib/debug/lib/modules/*/vmlinux", errNoBTF)
	}
	v := vmlinux[0]
	for _, o := range vmlinux[1:] {
		if o.Release != v.Release {
			return nil, fmt.Errorf("debug package with vmlinux of two releases, %s and %s", v.Release, o.Release)
		}
	}
	dv := &dwarfInput{Member: v.Path, VMLinux: v.File, Key: key(v.Release)}
	var other []string
	for _, m := range modules {
		if m.Release != v.Release {
			other = append(other, m.Path)
			continue
		}
		dv.Modules = append(dv.Modules, dwarfModule{Name: m.Name, Member: m.Path, File: m.File})
	}
	if len(other) > 0 {
		opts.warn(&KernelError{Path: in, Err: fmt.Errorf("%w: %d modules of another release than vmlinux %s, such as %s", errNoBase, len(other), v.Release, other[0])})
	}
	return dv, nil
}

// errNotDWARF ends importDWARF's read for a compressed ELF that has .BTF
// or no DWARF: the caller reads it as before.
var errNotDWARF = errors.New("not a DWARF vmlinux")

// importELFDWARF imports an ELF vmlinux that has DWARF and no .BTF,
// plain or compressed, through importDWARF; it reports false for any other
// input, which the caller reads again from the start. A compressed input
// is looked up in the cache first, and only on a miss streamed into a
// temporary file to look inside.
func importELFDWARF(ctx context.Context, in string, f *os.File, br *bufio.Reader, opts *ImportOptions, emit func(*Kernel, error)) (bool, error) {
	head, _ := br.Peek(64)
	format := extract.SniffCompression(head)
	if !extract.IsELF(head) && (format == extract.FormatNone || format == extract.FormatLZMA) {
		return false, nil
	}
	if kind, _, ok := kernelFile(filepath.Base(in)); ok && kind != kindImage {
		return false, nil // BTF by its name (.btf.xz, .btf.tar.xz): not decompressed twice
	}
	pathKey := inputKey(in)
	if format == extract.FormatNone {
		e, err := extract.InspectELF(f)
		if err == nil && e.BPF {
			// Its .BTF describes a program: with -arch and -release it
			// would become a "kernel" without a word.
			return false, fmt.Errorf("%w: a BPF object (ELF machine EM_BPF), not a kernel", extract.ErrUnknownFormat)
		}
		if err != nil || e.HasBTF || !e.HasDWARF {
			return false, nil // read as before, which reports the problem
		}
		emitDWARF(ctx, in, emit, opts, func(string, func(extract.DWARFFile) error) (*dwarfInput, error) {
			return &dwarfInput{VMLinux: in, Key: pathKey}, nil
		})
		return true, nil
	}
	rewind := func() error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		br.Reset(f)
		return nil
	}
	isELF := extract.CompressedELF(br, format)
	if err := rewind(); err != nil || !isELF {
		return err != nil, err
	}
	k, skipped, err := importDWARF(ctx, in, func(dir string, _ func(extract.DWARFFile) error) (*dwarfInput, error) {
		file := filepath.Join(dir, "vmlinux")
		e, err := streamELF(br, format, file)
		if err != nil {
			return nil, err
		}
		if e.HasBTF || !e.HasDWARF {
			return nil, errNotDWARF
		}
		return &dwarfInput{VMLinux: file, Key: pathKey}, nil
	}, opts)
	if errors.Is(err, pahole.ErrNotFound) || errors.Is(err, pahole.ErrTooOld) {
		// Without pahole, only a vmlinux with .BTF can be read: say
		// that pahole is missing only for one without.
		dir, remove, terr := atomicfile.TempDir("", "btfembed-dwarf")
		if terr != nil {
			return true, terr
		}
		defer remove()
		e, serr := streamELF(br, format, filepath.Join(dir, "vmlinux"))
		if serr == nil && !e.HasBTF && e.HasDWARF {
			emit(nil, err)
			return true, nil
		}
		return false, rewind()
	}
	if errors.Is(err, errNotDWARF) {
		return false, rewind()
	}
	for _, e := range skipped {
		emit(nil, e)
	}
	emit(k, err)
	return true, nil
}

// streamELF decompresses an ELF file into file and reads its section
// headers.
func streamELF(r io.Reader, format, file string) (extract.ELFFile, error) {
	dr, err := extract.NewDecompressReader(r, format)
	if err != nil {
		return extract.ELFFile{}, err
	}
	defer dr.Close()
	var q extract.DiskQuota
	if _, err := q.StreamToFile(file, dr); err != nil {
		return extract.ELFFile{}, err
	}
	tf, err := os.Open(file)
	if err != nil {
		return extract.ELFFile{}, err
	}
	defer tf.Close()
	return extract.InspectELF(tf)
}

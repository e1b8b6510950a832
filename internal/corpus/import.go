package corpus

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/osrelease"
	"github.com/btfembed/btfembed/internal/pathelem"
	"github.com/btfembed/btfembed/internal/regfile"
)

// ImportOptions tune Import. A nil *ImportOptions means the defaults.
type ImportOptions struct {
	// Key parts set here win over what the inputs tell, for every input
	// (the type is runtime.Key).
	Key kernelkey.Key
	// Workers is the number of inputs (and modules of one package) read at
	// once; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Strict stops the import at the first bad input.
	Strict bool
	// NoModules leaves module BTF out.
	NoModules bool
	// CacheDir is the cache (internal/cache) that keeps the BTF pahole
	// made from DWARF, keyed by the input's contents; "" means none.
	CacheDir string
	// CacheVerify is the verify mode, for a cache restored from a less
	// trusted source (cache.VerifyEnvVar): an input whose kernel made
	// from DWARF is cached goes through pahole again, and what pahole
	// makes is imported; an entry that differs from it (in the key, the
	// modules or any type but the FUNC records pahole varies, see
	// dwarfverify.go) is replaced, with a warning. It costs what an
	// import without the cache costs.
	CacheVerify bool
	// Warn, if set, is told of problems that do not fail the import (a
	// cache that cannot be read or written).
	Warn func(error)
	// Progress, if set, is told how the long part of an input goes: the
	// modules of a kernel made from DWARF (a debug package has thousands,
	// minutes of pahole), from the start of its read, as each module is
	// found and as each is made: done of the found so far, which are all
	// there are once read is true (modules are made while the input
	// still unpacks). Calls for one input come one at a time; calls for
	// different inputs may come at once.
	Progress func(input string, done, found int, read bool)
}

func (o *ImportOptions) warn(err error) {
	if o != nil && o.Warn != nil {
		o.Warn(err)
	}
}

func (o *ImportOptions) workers() int {
	if o == nil || o.Workers <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Workers
}

// Imported describes one kernel written by Import.
type Imported struct {
	Key kernelkey.Key // the kernel's identity (runtime.Key)
	// KeyFrom names what told Key's distribution and version, which are
	// a guess unless flags gave them: "its BTFHub path", "the kernel
	// banner (+deb12)", "the package version (6.12.118-1~deb12u1)",
	// "/etc/os-release", "-distro/-version"; "" when nothing told them.
	KeyFrom string
	Input   string // the input it came from
	File    string // the corpus file written
	Bytes   int    // raw vmlinux BTF bytes
	Modules int
}

// ImportResult is what Import did: the kernels written, sorted by key, and
// one *KernelError per input, kernel or module that was skipped.
type ImportResult struct {
	Kernels []Imported
	Skipped []error
}

// sysVMLinux is the running kernel's BTF, imported with uname's release
// and machine and the host's /etc/os-release.
const sysVMLinux = "/sys/kernel/btf/vmlinux"

// Import reads kernels from the inputs and writes them into the corpus
// rooted at dir (see writeKernel). An input is a kernel package (.deb), a
// kernel image (bzImage, Image, Image.gz, EFI zboot), an ELF vmlinux, raw or
// compressed BTF, a BTFHub archive file, /sys/kernel/btf/vmlinux, or a
// directory, imported as a corpus (see Read). Each input is read once;
// inputs are read in parallel.
//
// Bad inputs are reported in ImportResult.Skipped, as *KernelError values
// wrapping errNoBTF, errNoBase, errUnknownFormat or errIncompleteKey where
// one applies, and the others are still imported; with ImportOptions.Strict
// the first one ends the import and is returned as the error. Errors writing
// dir are always returned.
func Import(ctx context.Context, dir string, inputs []string, opts *ImportOptions) (*ImportResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		res   ImportResult
		fatal error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if fatal == nil {
			fatal = err
			cancel()
		}
	}
	// emit writes one kernel; errors writing the corpus are fatal, others
	// are recorded as skipped.
	emit := func(input string, k *Kernel, err error) {
		if err == nil {
			if err = k.checkNames(); err != nil {
				err = &KernelError{Path: k.Path, Err: err}
			}
		}
		if err == nil {
			var file string
			if file, err = writeKernel(dir, k); err != nil {
				fail(err)
				return
			}
			mu.Lock()
			res.Kernels = append(res.Kernels, Imported{Key: k.Key, KeyFrom: k.keyFrom, Input: input, File: file, Bytes: len(k.VMLinux), Modules: len(k.Modules)})
			mu.Unlock()
			return
		}
		var ke *KernelError
		if !errors.As(err, &ke) {
			err = &KernelError{Path: input, Err: err}
		}
		if opts != nil && opts.Strict {
			fail(err)
			return
		}
		mu.Lock()
		res.Skipped = append(res.Skipped, err)
		mu.Unlock()
	}

	// The RPMs of one kernel build (kernel-core, kernel-modules, ...) are
	// imported together, as one input.
	inputs, rpmGroups := groupRPMs(inputs, func(in string, err error) { emit(in, nil, err) })
	tasks := make([]func(), 0, len(inputs)+len(rpmGroups))
	for _, in := range inputs {
		tasks = append(tasks, func() { importInput(ctx, in, opts, func(k *Kernel, err error) { emit(in, k, err) }) })
	}
	for _, g := range rpmGroups {
		tasks = append(tasks, func() { importRPMs(ctx, g, opts, emit) })
	}
	sem := make(chan struct{}, opts.workers())
	var wg sync.WaitGroup
	for _, task := range tasks {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			task()
		}()
	}
	wg.Wait()
	if fatal != nil {
		return &res, fatal
	}
	if err := ctx.Err(); err != nil {
		return &res, err
	}
	slices.SortFunc(res.Kernels, func(a, b Imported) int { return a.Key.Compare(b.Key) })
	slices.SortFunc(res.Skipped, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return &res, nil
}

// importInput reads one input and hands each kernel or error to emit.
func importInput(ctx context.Context, in string, opts *ImportOptions, emit func(*Kernel, error)) {
	var over kernelkey.Key
	if opts != nil {
		over = opts.Key
	}
	st, err := os.Stat(in)
	if err != nil {
		emit(nil, err)
		return
	}
	if st.IsDir() {
		ropts := &Options{Workers: opts.workers(), NoModules: opts != nil && opts.NoModules}
		for k, err := range Read(ctx, []string{in}, ropts) {
			if k != nil {
				k.setKey(k.told().override(over))
			}
			emit(k, err)
		}
		return
	}
	if !st.Mode().IsRegular() {
		// A FIFO or device would be waited on or read without end.
		emit(nil, &KernelError{Path: in, Err: fmt.Errorf("not a regular file (%s)", st.Mode().Type())})
		return
	}
	f, err := os.Open(in)
	if err != nil {
		emit(nil, err)
		return
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	if magic, _ := br.Peek(len(extract.ArMagic)); string(magic) == extract.ArMagic {
		if c, err := extract.ReadDebControl(br); err == nil && extract.IsDebugPackage(c) {
			emitDWARF(ctx, in, emit, opts, func(dir string, found func(extract.DWARFFile) error) (*dwarfInput, error) {
				return readDebugDeb(in, dir, found, opts)
			})
			return
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			emit(nil, &KernelError{Path: in, Err: err})
			return
		}
		br.Reset(f)
		importDeb(in, br, over, opts, emit)
		return
	}
	if dwarf, err := importELFDWARF(ctx, in, f, br, opts, emit); dwarf || err != nil {
		if err != nil {
			emit(nil, &KernelError{Path: in, Err: err})
		}
		return
	}
	file, err := readBTFFromReader(br)
	if err == nil {
		_, err = extract.ParseBTF(file.BTF, nil)
	}
	if err != nil {
		emit(nil, &KernelError{Path: in, Err: err})
		return
	}
	k := &Kernel{Path: in, VMLinux: file.BTF}
	k.setKey(inputKey(in).or(told{file.Key, file.keyFrom}).override(over))
	if k.Key.Arch == "" || k.Key.Release == "" {
		emit(nil, &KernelError{Path: in, Err: fmt.Errorf("%w: give -arch and -release", errIncompleteKey)})
		return
	}
	emit(k, nil)
}

// inputKey is what an input's path tells of its key: the BTFHub layout
// around it (pathKey), a release in the file name (vmlinuz-<release>,
// <release>.btf), and for /sys/kernel/btf/vmlinux the running system.
func inputKey(in string) told {
	if filepath.Clean(in) == sysVMLinux {
		return hostKey("/")
	}
	kind, rel, ok := kernelFile(filepath.Base(in))
	if !ok {
		return told{}
	}
	if kind == kindImage && extract.FormatFromExt(rel) != extract.FormatNone {
		rel = strings.TrimSuffix(rel, filepath.Ext(rel)) // vmlinux-<release>.xz
	}
	return toldBy(pathKey(in, kind, rel), fromPath)
}

// hostKey is the key of the running kernel: uname's release and machine,
// and ID and VERSION_ID from <root>/etc/os-release.
func hostKey(root string) told {
	var k kernelkey.Key
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		k.Release = unix.ByteSliceToString(u.Release[:])
		k.Arch, _ = kernelkey.NormalizeArch(unix.ByteSliceToString(u.Machine[:]))
	}
	k.Distro, k.Version = osRelease(filepath.Join(root, "etc/os-release"))
	return toldBy(k, fromOSRelease)
}

// osRelease reads ID and VERSION_ID from an os-release(5) file, or
// nothing if it cannot be read.
func osRelease(file string) (id, version string) {
	data, err := regfile.ReadFile(file, 64<<10)
	if err != nil {
		return "", ""
	}
	r := osrelease.Parse(data)
	return r.ID, r.VersionID
}

// overrideKey sets the parts of k that over has.
func overrideKey(k, over kernelkey.Key) kernelkey.Key {
	for _, p := range []struct{ dst, src *string }{
		{&k.Arch, &over.Arch}, {&k.Release, &over.Release}, {&k.Distro, &over.Distro}, {&k.Version, &over.Version},
	} {
		if *p.src != "" {
			*p.dst = *p.src
		}
	}
	return k
}

// importDeb imports the kernels of a kernel package with their modules.
func importDeb(in string, r io.Reader, over kernelkey.Key, opts *ImportOptions, emit func(*Kernel, error)) {
	c, err := extract.ReadDeb(r, opts.workers())
	if err != nil {
		emit(nil, &KernelError{Path: in, Err: err})
		return
	}
	if len(c.Images) == 0 {
		emit(nil, &KernelError{Path: in, Err: fmt.Errorf("%w: package has no /boot/vmlinuz-*", errNoBTF)})
	}
	arch, _ := kernelkey.NormalizeArch(c.Control.Architecture)
	key := func(img fromPackage[extract.PackageImage]) told {
		return told{key: kernelkey.Key{Arch: arch, Release: img.item.Release}}.
			or(bannerTold(img.item.Image.Arch, img.item.Image.Banner)).
			or(debDistro(c.Control))
	}
	debugPackage := func(release string) string {
		return "linux-image-" + release + "-dbg (Ubuntu: linux-image-unsigned-" + release + "-dbgsym)"
	}
	packageKernels(sourced(in, c.Images), sourced(in, c.Modules), key, debugPackage, over, opts, emit)
}

// fromPackage is an image or module with the package file it came from.
type fromPackage[T any] struct {
	file string // the package
	item T
}

// sourced pairs the images or modules of one package with its file.
func sourced[T any](file string, items []T) []fromPackage[T] {
	out := make([]fromPackage[T], len(items))
	for i, it := range items {
		out[i] = fromPackage[T]{file, it}
	}
	return out
}

// packageKernels makes a kernel of each image of a package, or of the
// packages of one kernel build, with the modules of its release, and
// reports the modules no image of their release came with. key tells an
// image's key before the flags override it; debugPackage names the
// package that has the DWARF of a release, for an image without BTF.
func packageKernels(images []fromPackage[extract.PackageImage], mods []fromPackage[extract.PackageModule], key func(fromPackage[extract.PackageImage]) told,
	debugPackage func(release string) string, over kernelkey.Key, opts *ImportOptions, emit func(*Kernel, error)) {
	byRelease := map[string][]fromPackage[extract.PackageModule]{}
	for _, m := range mods {
		byRelease[m.item.Release] = append(byRelease[m.item.Release], m)
	}
	slices.SortFunc(images, func(a, b fromPackage[extract.PackageImage]) int {
		return cmp.Or(strings.Compare(a.file, b.file), strings.Compare(a.item.Path, b.item.Path))
	})
	seen := map[string][]byte{} // release -> BTF
	var failed []fromPackage[extract.PackageImage]
	for _, img := range images {
		member := img.file + ":" + img.item.Path
		if img.item.Err != nil {
			failed = append(failed, img)
			continue
		}
		if prev, ok := seen[img.item.Release]; ok {
			// The same kernel twice (boot/vmlinuz-<release> beside
			// lib/modules/<release>/vmlinuz) is one kernel.
			if !bytes.Equal(prev, img.item.Image.BTF) {
				emit(nil, &KernelError{Path: member, Err: fmt.Errorf("a second kernel image of release %s, with other BTF", img.item.Release)})
			}
			continue
		}
		base, err := extract.ParseBTF(img.item.Image.BTF, nil)
		if err != nil {
			emit(nil, &KernelError{Path: member, Err: err})
			continue
		}
		seen[img.item.Release] = img.item.Image.BTF
		k := &Kernel{Path: member, VMLinux: img.item.Image.BTF}
		k.setKey(key(img).override(over))
		if opts == nil || !opts.NoModules {
			mods := byRelease[img.item.Release]
			delete(byRelease, img.item.Release)
			k.Modules = packageModules(mods, base, opts.workers(), emit)
		}
		emit(k, nil)
	}
	// An image that cannot be read takes the modules of its release with
	// it, in one error: they have no kernel to be split over, but it is
	// there, and "no kernel image" would send the user looking for one.
	for _, img := range failed {
		mods := byRelease[img.item.Release]
		delete(byRelease, img.item.Release)
		emit(nil, &KernelError{Path: img.file + ":" + img.item.Path, Err: imageError(img.item.Err, len(mods), debugPackage(img.item.Release))})
	}
	for _, rel := range slices.Sorted(maps.Keys(byRelease)) {
		mods := byRelease[rel]
		emit(nil, &KernelError{Path: mods[0].file + ":lib/modules/" + rel,
			Err: fmt.Errorf("%w: %d modules, no kernel image of release %s (boot/vmlinuz-%s or lib/modules/%s/vmlinuz) in the same package or build", errNoBase, len(mods), rel, rel, rel)})
	}
}

// imageError is the error of a package's kernel image that could not be
// read, with the number of modules of its release left out with it. An
// image without BTF is no corrupt file: it says where its kernel's BTF is
// to be had, the debug package's DWARF.
func imageError(err error, modules int, debugPackage string) error {
	if errors.Is(err, errNoBTF) {
		err = fmt.Errorf("%w in the kernel image (built without CONFIG_DEBUG_INFO_BTF): import its debug package %s instead, whose DWARF pahole makes into BTF, modules included", errNoBTF, debugPackage)
	}
	if modules > 0 {
		err = fmt.Errorf("%w; its %d modules in this package are left out", err, modules)
	}
	return err
}

// debDistro guesses the distribution from a package's version
// ("6.12.118-1~deb12u1" is Debian 12).
func debDistro(c extract.DebControl) told {
	b := extract.ParseBanner(c.Package + " " + c.Version)
	if b.Version == "" {
		return told{}
	}
	return told{kernelkey.Key{Distro: b.Distro, Version: b.Version}, "the package version (" + c.Version + ")"}
}

// packageModules validates a kernel's modules over its vmlinux, in
// parallel, and returns the good ones sorted by name.
func packageModules(mods []fromPackage[extract.PackageModule], base *btfSpec, workers int, emit func(*Kernel, error)) []Module {
	slices.SortFunc(mods, func(a, b fromPackage[extract.PackageModule]) int {
		return cmp.Or(strings.Compare(a.file, b.file), strings.Compare(a.item.Path, b.item.Path))
	})
	errs := make([]error, len(mods))
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i, fm := range mods {
		m := fm.item
		if m.Err == nil {
			if err := pathelem.Validate(m.Name); err != nil {
				m.Err = fmt.Errorf("module name: %w", err)
			}
		}
		if m.Err != nil {
			errs[i] = m.Err
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = checkModule(m.BTF, base)
		}()
	}
	wg.Wait()
	var good []Module
	seen := map[string]bool{}
	for i, fm := range mods {
		m, member := fm.item, fm.file+":"+fm.item.Path
		err := errs[i]
		if err == nil && seen[m.Name] {
			err = fmt.Errorf("duplicate module %s", m.Name)
		}
		if err != nil {
			emit(nil, &KernelError{Path: member, Err: err})
			continue
		}
		seen[m.Name] = true
		good = append(good, Module{Name: m.Name, Path: member, BTF: m.BTF})
	}
	slices.SortFunc(good, func(a, b Module) int { return strings.Compare(a.Name, b.Name) })
	return good
}

package corpus

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/btfembed/btfembed/internal/btfload"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/regfile"
)

// Options tune Read. A nil *Options means the defaults.
type Options struct {
	// Workers is the number of kernels (and modules of one kernel) read at
	// once; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Strict ends the stream at the first error.
	Strict bool
	// Arch keeps only kernels of these architectures (any spelling
	// kernelkey.NormalizeArch knows); empty keeps all.
	Arch []string
	// Release keeps only kernels whose release matches this path.Match
	// pattern ("6.1.*"); empty keeps all.
	Release string
	// Distro keeps only kernels of this distribution; empty keeps all.
	Distro string
	// NoModules skips module BTF.
	NoModules bool
	// Found, if set, is called once by Read with the number of corpus
	// entries the walk found and the filters kept, before any is read, so
	// a caller can show progress against a total.
	Found func(entries int)
	// Filtered, if set, is called for every kernel a filter removes, with
	// the filter's name ("arch", "release" or "distro"), so a caller can
	// say which filter left nothing.
	Filtered func(path string, k kernelkey.Key, filter string)
	// Shard and Shards keep only the corpus entries of one shard out of
	// Shards (see shardOf); Shards 0 keeps all.
	Shard, Shards int
	// FullSpecs, if set, has cilium/ebpf load each kernel's vmlinux BTF
	// as the kernel is read (Kernel.FullSpec). A raw BTF file is then
	// read once, straight into the buffer cilium/ebpf keeps, which
	// VMLinux shares, rather than into a buffer of its own and copied
	// into cilium/ebpf's: the generator, which loads every kernel's full
	// BTF for its oracle, sets it.
	FullSpecs bool
	// ReadEntry, if set, reads each kernel in place of Entry.Read, which
	// it may call; a cache uses it to skip files it has read before. Read
	// still applies the filters, the order and the duplicate check to
	// what it returns.
	ReadEntry func(*Entry) (*Kernel, []error)
	// Hold has a yielded kernel keep its place among the Workers kernels
	// Read holds until the caller calls its Release, not only until the
	// loop body returns. A caller that hands kernels on to workers of its
	// own sets it, so that the kernels being read and the ones its
	// workers hold number Workers in all: each is several MB of memory
	// the process must fault in, which on a cold generate run costs more
	// than reading it ahead saves (docs/performance.md). Every kernel
	// yielded must then be released, or the stream stalls once Workers
	// kernels are held; a release after the stream has ended is harmless.
	Hold bool
}

func (o *Options) workers() int {
	if o == nil || o.Workers <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Workers
}

// keep tells whether a key passes the filters; parts of the key still
// unknown pass, to be checked again once the file is read.
func (o *Options) keep(k kernelkey.Key) bool { return o.drop(k) == "" }

// drop names the filter that removes a key, or returns "".
func (o *Options) drop(k kernelkey.Key) string {
	if o == nil {
		return ""
	}
	if len(o.Arch) > 0 && k.Arch != "" && !slices.ContainsFunc(o.Arch, func(a string) bool {
		n, ok := kernelkey.NormalizeArch(a)
		return ok && n == k.Arch || a == k.Arch
	}) {
		return "arch"
	}
	if o.Release != "" && k.Release != "" {
		if ok, err := path.Match(o.Release, k.Release); err != nil || !ok {
			return "release"
		}
	}
	if o.Distro != "" && k.Distro != "" && !strings.EqualFold(o.Distro, k.Distro) {
		return "distro"
	}
	return ""
}

// filter tells whether a kernel passes the filters, and reports it to
// Options.Filtered when it does not.
func (o *Options) filter(p string, k kernelkey.Key) bool {
	f := o.drop(k)
	if f != "" && o.Filtered != nil {
		o.Filtered(p, k, f)
	}
	return f == ""
}

// Read walks the roots (directories or single files) and yields their
// kernels one at a time, sorted by the key their paths give (then by path),
// so the same corpus always streams in the same order. Up to
// Options.Workers kernels are read in parallel, and no more are held: a
// kernel counts from when its read starts until the loop body that gets
// it returns, or with Options.Hold until its Release.
//
// A kernel, module or directory entry that cannot be read is yielded as a
// nil kernel with a *KernelError, and the stream goes on; with
// Options.Strict it ends after that error. A kernel with some bad modules is
// yielded with the good ones, after one error per bad module. The stream
// ends early when ctx is done, with ctx.Err() as the last error.
func Read(ctx context.Context, roots []string, opts *Options) iter.Seq2[*Kernel, error] {
	return func(yield func(*Kernel, error) bool) {
		var entries []entry
		for _, e := range walkCorpus(roots) {
			if (e.err != nil || opts.filter(e.path, e.key)) && opts.inShard(e) {
				entries = append(entries, e)
			}
		}
		if opts != nil && opts.Found != nil {
			opts.Found(len(entries))
		}
		ctx, cancel := context.WithCancel(ctx)

		type result struct {
			k    *Kernel
			errs []error
		}
		results := make([]chan result, len(entries))
		for i := range results {
			results[i] = make(chan result, 1)
		}
		// Tokens bound the kernels read but not yet yielded.
		tokens := make(chan struct{}, opts.workers())
		var wg sync.WaitGroup
		defer func() { cancel(); wg.Wait() }()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, e := range entries {
				select {
				case tokens <- struct{}{}:
				case <-ctx.Done():
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					k, errs := readEntry(ctx, e, opts)
					results[i] <- result{k, errs}
				}()
			}
		}()

		strict := opts != nil && opts.Strict
		seen := map[kernelkey.Key]string{}
		// emit yields an entry's errors, then its kernel, and reports
		// whether it yielded the kernel and whether the stream goes on.
		emit := func(k *Kernel, errs []error) (yielded, more bool) {
			for _, err := range errs {
				if !yield(nil, err) || strict {
					return false, false
				}
			}
			if k == nil || !opts.filter(k.Path, k.Key) {
				return false, true
			}
			if prev, dup := seen[k.Key]; dup {
				err := &KernelError{Path: k.Path, Err: fmt.Errorf("duplicate kernel %s, also in %s", k.Key, prev)}
				return false, yield(nil, err) && !strict
			}
			seen[k.Key] = k.Path
			return true, yield(k, nil)
		}
		hold := opts != nil && opts.Hold
		for i := range entries {
			var r result
			select {
			case r = <-results[i]:
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
			if hold && r.k != nil {
				r.k.release = sync.OnceFunc(func() { <-tokens })
			}
			yielded, more := emit(r.k, r.errs)
			if !hold || !yielded {
				<-tokens // a kernel not held gives its place back now
			}
			if !more {
				return
			}
		}
	}
}

// Entry is one kernel of a corpus as the walk finds it, before its files
// are read.
type Entry struct {
	// Path is the kernel's file.
	Path string
	// Key is what the path tells of the kernel; reading the file may
	// complete it.
	Key kernelkey.Key
	// Modules are the module files of the kernel's modules directory,
	// sorted; empty with Options.NoModules.
	Modules []string

	modulesErr error // listing the modules directory failed
	e          entry
	opts       *Options
}

// Read reads the kernel's file and its modules, validating the modules'
// split BTF over the kernel's. Module files that cannot be read are
// returned as errors beside the kernel, which holds the good ones.
func (e *Entry) Read() (*Kernel, []error) {
	k, err := readKernelFile(e.e, e.opts != nil && e.opts.FullSpecs)
	if err != nil {
		return nil, []error{&KernelError{Path: e.Path, Err: err}}
	}
	if e.e.modulesDir == "" || (e.opts != nil && e.opts.NoModules) || !e.opts.keep(k.Key) {
		return k, nil
	}
	var errs []error
	if e.modulesErr != nil {
		errs = append(errs, &KernelError{Path: e.e.modulesDir, Err: e.modulesErr})
	}
	// Modules are checked as split BTF over the kernel's parse.
	mods, modErrs := readModules(e.Modules, k.spec, e.opts.workers())
	k.Modules = mods
	return k, append(errs, modErrs...)
}

// readEntry reads one kernel and its modules, through Options.ReadEntry
// when set.
func readEntry(ctx context.Context, e entry, opts *Options) (*Kernel, []error) {
	if e.err != nil {
		return nil, []error{&KernelError{Path: e.path, Err: e.err}}
	}
	if ctx.Err() != nil {
		return nil, nil
	}
	ent := &Entry{Path: e.path, Key: e.key, e: e, opts: opts}
	if e.modulesDir != "" && (opts == nil || !opts.NoModules) {
		ent.Modules, ent.modulesErr = moduleFiles(e.modulesDir)
	}
	if opts != nil && opts.ReadEntry != nil {
		return opts.ReadEntry(ent)
	}
	return ent.Read()
}

// readKernelFile reads the vmlinux BTF of one corpus file, checks it by
// parsing it and completes its key from the file's contents; with full,
// cilium/ebpf loads it too (Options.FullSpecs).
func readKernelFile(e entry, full bool) (*Kernel, error) {
	k := &Kernel{Key: e.key, Path: e.path, keyFrom: toldBy(e.key, fromPath).from}
	if full && e.kind == kindRaw && extract.FormatFromExt(filepath.Base(e.path)) == extract.FormatNone {
		// On any error the file is read the usual way, which says what
		// is wrong with it.
		if spec, raw, index, err := btfload.File(e.path, extract.MaxBTF); err == nil {
			if k.VMLinux, err = extract.RawBTFFile(raw); err == nil {
				k.FullSpec, k.spec = spec, index
			}
		}
	}
	if k.FullSpec == nil {
		if err := readVMLinux(k, e); err != nil {
			return nil, err
		}
	}
	if err := k.checkNames(); err != nil {
		return nil, err
	}
	if k.Key.Arch == "" || k.Key.Release == "" {
		return nil, fmt.Errorf("%w: put the file under .../<distro>/<version>/<arch>/ or import it with -arch and -release", errIncompleteKey)
	}
	if full && k.FullSpec == nil {
		// Not an error here: the generator loads VMLinux again, and
		// says why it fails.
		k.FullSpec, _ = btfload.Spec(k.VMLinux, k.spec)
	}
	return k, nil
}

// readVMLinux reads e's file into k.VMLinux, whatever its form, and
// checks it by parsing it.
func readVMLinux(k *Kernel, e entry) error {
	data, err := regfile.ReadFile(e.path, extract.MaxImage)
	if err != nil {
		return err
	}
	switch e.kind {
	case kindBTFHub:
		// What a .btf.tar.xz holds is decided as for every file a
		// command is given (fileBTF), so ls, generate, min, inspect and
		// import accept the same files.
		var f *File
		if f, err = fileBTF(data); err == nil {
			k.VMLinux = f.BTF
			k.setKey(k.told().or(told{f.Key, f.keyFrom}))
		}
	case kindRaw:
		k.VMLinux, err = readRawBTF(filepath.Base(e.path), data)
	case kindImage:
		var img extract.ImageBTF
		img, err = extract.FindImageBTF(data)
		k.VMLinux = img.BTF
		k.setKey(k.told().or(bannerTold(img.Arch, img.Banner)))
	}
	if err != nil {
		return err
	}
	// Checked here, so that a bad kernel is reported with its file.
	k.spec, err = parseKernel(k.VMLinux)
	return err
}

// readRawBTF reads raw BTF, compressed as the file name's extension says.
func readRawBTF(name string, data []byte) ([]byte, error) {
	if format := extract.FormatFromExt(name); format != extract.FormatNone {
		inner, release, err := extract.Decompress(data, format, extract.MaxImage)
		if err != nil {
			return nil, err
		}
		defer release()
		data = inner
	}
	return extract.RawBTFFile(data)
}

// completeKey fills the parts of a key the path did not give from what the
// contents tell. Distro and version are taken together or not at all.
func completeKey(k, from kernelkey.Key) kernelkey.Key {
	if k.Arch == "" {
		k.Arch = from.Arch
	}
	if k.Release == "" {
		k.Release = from.Release
	}
	if k.Distro == "" && k.Version == "" {
		k.Distro, k.Version = from.Distro, from.Version
	}
	return k
}

// moduleFiles lists the module files under dir, sorted.
func moduleFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if _, ok := extract.ModuleName(d.Name()); ok && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// readModules reads module files, in parallel, and validates each over
// the kernel's vmlinux BTF.
func readModules(files []string, base *btfSpec, workers int) ([]Module, []error) {
	var errs []error
	mods := make([]Module, len(files))
	modErrs := make([]error, len(files))
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i, f := range files {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			name, _ := extract.ModuleName(filepath.Base(f))
			mods[i] = Module{Name: name, Path: f}
			mods[i].BTF, modErrs[i] = readModuleFile(f, base)
		}()
	}
	wg.Wait()
	var good []Module
	byName := map[string]string{}
	for i, m := range mods {
		if modErrs[i] != nil {
			errs = append(errs, &KernelError{Path: m.Path, Err: modErrs[i]})
			continue
		}
		if prev, dup := byName[m.Name]; dup {
			errs = append(errs, &KernelError{Path: m.Path, Err: fmt.Errorf("duplicate module %s, also in %s", m.Name, prev)})
			continue
		}
		byName[m.Name] = m.Path
		good = append(good, m)
	}
	slices.SortFunc(good, func(a, b Module) int { return strings.Compare(a.Name, b.Name) })
	return good, errs
}

func readModuleFile(file string, base *btfSpec) ([]byte, error) {
	data, err := regfile.ReadFile(file, extract.MaxImage)
	if err != nil {
		return nil, err
	}
	b, err := extract.ModuleBTF(filepath.Base(file), data)
	if err != nil {
		return nil, err
	}
	if err := checkModule(b, base); err != nil {
		return nil, err
	}
	return b, nil
}

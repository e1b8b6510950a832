package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/pahole"
	"github.com/btfembed/btfembed/internal/pathelem"
)

// moduleProgress is how the modules of a kernel made from DWARF go, as
// ImportOptions.Progress hears of it.
type moduleProgress struct {
	done  int  // modules made into BTF (or failed)
	found int  // modules found in the input so far
	read  bool // the whole input is read: found is all there are
}

// dwarfEncoder runs pahole on a debug package's files while the package
// still streams: the vmlinux as soon as it is on disk, and each module,
// once the vmlinux's BTF is there to be its base, on up to
// ImportOptions.Workers processes. Unpacking (a minute of xz for
// Debian's 686-pae -dbg) and the thousands of module runs then overlap
// instead of following each other, and a module's file is removed once
// made, so that the disk holds the modules in flight, not the whole
// package (3.3 GB unpacked for that one).
//
// Debian's packages hold the vmlinux first; where it comes last (RPM
// debuginfo's sorted cpio) the modules wait on disk for it, as they all
// did before.
type dwarfEncoder struct {
	ctx    context.Context
	cancel context.CancelFunc
	tool   *pahole.Tool
	source string
	dir    string
	opts   *ImportOptions

	started     bool   // a vmlinux is being made; later ones are not
	pathRelease string // its release, as its path tells it
	release     string // the release its flags were chosen for
	baseReady   chan struct{}
	vmlinux     []byte // set, with base and baseFile or baseErr, before baseReady closes
	base        *btfSpec
	baseFile    string
	baseErr     error

	sem chan struct{}
	wg  sync.WaitGroup

	begun map[string]bool // the module files being made, by the reader's goroutine

	mu      sync.Mutex
	modules map[string]moduleBTF // by the file streamed to
	status  moduleProgress
}

// moduleBTF is what pahole made of one module file.
type moduleBTF struct {
	btf []byte
	err error
}

func newDWARFEncoder(ctx context.Context, tool *pahole.Tool, source, dir string, opts *ImportOptions) *dwarfEncoder {
	ctx, cancel := context.WithCancel(ctx)
	e := &dwarfEncoder{ctx: ctx, cancel: cancel, tool: tool, source: source, dir: dir, opts: opts,
		baseReady: make(chan struct{}), sem: make(chan struct{}, opts.workers()),
		begun: map[string]bool{}, modules: map[string]moduleBTF{}}
	e.report(func(*moduleProgress) {})
	return e
}

// stop ends the runs still going (after a failed read) and waits for
// them.
func (e *dwarfEncoder) stop() {
	e.cancel()
	e.wg.Wait()
}

// report changes the status under the lock and tells Progress.
func (e *dwarfEncoder) report(change func(*moduleProgress)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	change(&e.status)
	if e.opts != nil && e.opts.Progress != nil {
		e.opts.Progress(e.source, e.status.done, e.status.found, e.status.read)
	}
}

// found is an extract.DWARFOptions.Found: it starts the work on a file
// the package's reader has just put on disk.
func (e *dwarfEncoder) found(f extract.DWARFFile) error {
	if f.Name == "" {
		e.startVMLinux(f.File, f.Release)
		return nil
	}
	e.startModule(f.File, f.Name, f.Release)
	return nil
}

// startVMLinux makes the BTF of the first vmlinux found, with the flags of
// release (ImportOptions.Key's release overrides, as dwarfKey's does).
func (e *dwarfEncoder) startVMLinux(file, release string) {
	if e.started {
		return // a second one: dwarfPackage refuses it if it is of another release
	}
	e.started, e.pathRelease, e.release = true, release, release
	if e.opts != nil && e.opts.Key.Release != "" {
		e.release = e.opts.Key.Release
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(e.baseReady)
		e.vmlinux, e.baseErr = e.tool.Encode(e.ctx, pahole.Job{ELF: file, Kernel: pahole.ParseKernelRelease(e.release)})
		if e.baseErr == nil {
			e.base, e.baseErr = extract.ParseBTF(e.vmlinux, nil)
		}
		if e.baseErr == nil {
			// pahole reads the base from a file.
			e.baseFile = filepath.Join(e.dir, ".vmlinux.btf")
			e.baseErr = os.WriteFile(e.baseFile, e.vmlinux, 0o600)
		}
	}()
}

// startModule makes the split BTF of module name's file over the
// vmlinux's, once that is made. A module of another release than the
// vmlinux's is not made (dwarfPackage reports it); release is "" when
// the reader did not tell it.
func (e *dwarfEncoder) startModule(file, name, release string) {
	e.begun[file] = true
	e.report(func(p *moduleProgress) { p.found++ })
	if err := pathelem.Validate(name); err != nil {
		e.finish(file, moduleBTF{err: err})
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		select {
		case <-e.baseReady:
		case <-e.ctx.Done():
			return
		}
		if e.baseErr != nil || release != "" && release != e.pathRelease {
			e.finish(file, moduleBTF{})
			return
		}
		select {
		case e.sem <- struct{}{}:
		case <-e.ctx.Done():
			return
		}
		defer func() { <-e.sem }()
		var m moduleBTF
		m.btf, m.err = e.tool.Encode(e.ctx, pahole.Job{ELF: file, Kernel: pahole.ParseKernelRelease(e.release), BaseFile: e.baseFile, Base: e.base})
		if m.err == nil {
			m.err = checkModule(m.btf, e.base)
		}
		os.Remove(file) // made: its DWARF is needed no more
		e.finish(file, m)
	}()
}

// finish records a module's result.
func (e *dwarfEncoder) finish(file string, m moduleBTF) {
	e.report(func(p *moduleProgress) {
		e.modules[file] = m
		p.done++
	})
}

// kernel waits for the runs on in's files, starting those the reader did
// not hand to found (a vmlinux given as such), and makes the kernel of in
// and the modules that failed.
func (e *dwarfEncoder) kernel(in *dwarfInput) (*Kernel, []error, error) {
	path := memberPath(e.source, in.Member)
	fail := func(err error) (*Kernel, []error, error) { return nil, nil, &KernelError{Path: path, Err: err} }
	key, err := dwarfKey(in, e.opts)
	if err != nil {
		return fail(err)
	}
	if !e.started {
		e.startVMLinux(in.VMLinux, key.key.Release)
	}
	if e.release != key.key.Release {
		return fail(fmt.Errorf("vmlinux made with the flags of release %s, keyed %s", e.release, key.key.Release))
	}
	mods := slices.Clone(in.Modules)
	slices.SortFunc(mods, func(a, b dwarfModule) int { return strings.Compare(a.Member, b.Member) })
	for _, m := range mods {
		if !e.begun[m.File] {
			e.startModule(m.File, m.Name, "")
		}
	}
	e.report(func(p *moduleProgress) { p.read = true })
	e.wg.Wait()
	if err := e.ctx.Err(); err != nil {
		return nil, nil, err
	}
	if e.baseErr != nil {
		return fail(e.baseErr)
	}
	k := &Kernel{Path: path, VMLinux: e.vmlinux}
	k.setKey(key)
	var skipped []error
	seen := map[string]bool{}
	for _, m := range mods {
		r := e.modules[m.File]
		err := r.err
		if err == nil && seen[m.Name] {
			err = fmt.Errorf("duplicate module %s", m.Name)
		}
		if err != nil {
			skipped = append(skipped, &KernelError{Path: memberPath(e.source, m.Member), Err: err})
			continue
		}
		seen[m.Name] = true
		k.Modules = append(k.Modules, Module{Name: m.Name, Path: memberPath(e.source, m.Member), BTF: r.btf})
	}
	slices.SortFunc(k.Modules, func(a, b Module) int { return strings.Compare(a.Name, b.Name) })
	return k, skipped, nil
}

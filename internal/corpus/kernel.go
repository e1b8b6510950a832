package corpus

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/pathelem"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Kernel is one kernel of a corpus: its vmlinux BTF and the BTF of its modules.
type Kernel struct {
	Key kernelkey.Key
	// Path is the file the kernel was read from.
	Path string
	// VMLinux is the raw vmlinux BTF, exactly as the kernel carries it in
	// its .BTF section.
	VMLinux []byte
	// Modules are sorted by name.
	Modules []Module
	// FullSpec is cilium/ebpf's spec of VMLinux, with Options.FullSpecs
	// (nil without, or if cilium/ebpf does not load it). For a raw BTF
	// file it shares VMLinux's bytes. It must be used by one goroutine at
	// a time (internal/btfload says why).
	FullSpec *btf.Spec

	// keyFrom names what told the key's distribution and version
	// (told.from), for import to show.
	keyFrom string
	// spec is the parse that checked VMLinux, over which the modules
	// are checked.
	spec *btfSpec
	// release gives the kernel's place back to Read (Options.Hold).
	release func()
}

// Spec is the parse that checked VMLinux (internal/rawbtf's index of it),
// over which the modules were checked: the generator matches relocations
// against it rather than parse the vmlinux's 4-6 MB again for every
// kernel. Nil for a Kernel that Read did not make.
func (k *Kernel) Spec() *rawbtf.Spec { return k.spec }

// Release tells Read, which yielded k with Options.Hold, that the caller
// is done with it, so that another kernel may be read in its place. It
// does nothing without Options.Hold, or when called again.
func (k *Kernel) Release() {
	if k.release != nil {
		k.release()
	}
}

// checkNames checks every string of a kernel that becomes a path element
// of a corpus (the key's parts, module names) with
// pathelem.Validate: they come from file contents (a banner, a
// package's control file and member names) and must not leave the
// corpus root.
func (k *Kernel) checkNames() error {
	for _, p := range []struct{ what, s string }{
		{"arch", k.Key.Arch}, {"release", k.Key.Release}, {"distro", k.Key.Distro}, {"version", k.Key.Version},
	} {
		if p.s == "" {
			continue
		}
		if err := pathelem.Validate(p.s); err != nil {
			return fmt.Errorf("kernel %s: %w", p.what, err)
		}
	}
	for _, m := range k.Modules {
		if err := pathelem.Validate(m.Name); err != nil {
			return fmt.Errorf("module %s: name: %w", m.Path, err)
		}
	}
	return nil
}

// Module is the BTF of one kernel module.
type Module struct {
	// Name is the module's file name without extensions ("nf_conntrack").
	Name string
	// Path is the file the module was read from.
	Path string
	// BTF is raw split BTF over the kernel's VMLinux.
	BTF []byte
}

// Sentinel errors, wrapped by the errors of this package.
var (
	// errNoBTF: the input holds no BTF (for a kernel image, it was built
	// without CONFIG_DEBUG_INFO_BTF).
	errNoBTF = extract.ErrNoBTF
	// errNoBase: module BTF without the vmlinux BTF it is split over.
	errNoBase = errors.New("module without its kernel's vmlinux BTF")
	// errUnknownFormat: the input is none of the formats this package reads.
	errUnknownFormat = extract.ErrUnknownFormat
	// errIncompleteKey: the input does not tell the release or arch and no
	// flag gave it.
	errIncompleteKey = errors.New("release or architecture unknown")
	// errTooLarge: the input decompresses, or claims to decompress, past
	// one of the caps of docs/threat-model.md.
	errTooLarge = extract.ErrTooLarge
	// errMemoryBudget: the inputs read in parallel together needed more
	// than the memory budget; fewer workers help.
	errMemoryBudget = extract.ErrMemoryBudget
)

// KernelError reports one corpus file (a kernel, a module or an import
// input) that could not be read. The stream of kernels goes on after it
// unless Options.Strict is set.
type KernelError struct {
	Path string
	Err  error
}

func (e *KernelError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }

func (e *KernelError) Unwrap() error { return e.Err }

package corpus

import (
	"context"
	"fmt"
	"hash/maphash"
	"os"

	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/pahole"
)

// dwarfInput is a kernel whose BTF pahole makes from DWARF: its files
// already on disk, streamed there by the reader of its container.
type dwarfInput struct {
	// Member is the vmlinux's path inside the source ("" when the source
	// is the vmlinux itself); the kernel's Path is source:member.
	Member string
	// VMLinux is the ELF vmlinux with DWARF.
	VMLinux string
	// Modules are modules with DWARF, each made into split BTF over the
	// vmlinux's BTF, as the kernel's build does with pahole --btf_base.
	Modules []dwarfModule
	// Key is what the container and the source's path tell (a package's
	// release and distribution). The vmlinux's ELF machine and banner
	// fill the parts it leaves empty; ImportOptions.Key overrides all.
	Key told
	// Fallback gives the parts neither Key nor the banner tell (the
	// distribution a package's version suggests).
	Fallback told
}

// dwarfReader streams the DWARF files of a source into dir, telling found
// of each as it is whole on disk (extract.DWARFOptions.Found), so that
// pahole can start on them while the rest streams.
type dwarfReader func(dir string, found func(extract.DWARFFile) error) (*dwarfInput, error)

// dwarfModule is one module file of a dwarfInput.
type dwarfModule struct {
	Name   string // module name ("nf_conntrack")
	Member string // path inside the source, for Module.Path and errors
	File   string // the ELF file with DWARF
}

// importDWARF makes a kernel from DWARF with pahole (package
// internal/pahole: the flags the kernel's own build uses, a memory budget
// bounding concurrent runs). It is the import of a DWARF vmlinux, a
// Debian -dbg package and a kernel-debuginfo RPM.
//
// source is the file given to import (a vmlinux, vmlinux.xz, .deb, .rpm).
// With ImportOptions.CacheDir set, the kernel is cached under the digest
// of source's contents, pahole's version and the key the options force,
// and a hit returns it without calling read or running pahole. On a miss
// read is called with a new private temporary directory to stream the
// DWARF files into (never into memory: a debug vmlinux is hundreds of
// MB), and pahole starts on each file as it arrives (dwarfEncoder); the
// directory is removed when importDWARF returns, and on
// SIGINT/SIGTERM by atomicfile.RemoveTemps. A cache that cannot be read or
// written only warns (ImportOptions.Warn). In verify mode
// (ImportOptions.CacheVerify) a hit is not returned: pahole runs as on a
// miss, and an entry that is not what it makes is warned about and
// replaced.
//
// Modules pahole or the check fail on are returned as *KernelError values
// beside the kernel. The kernel's errors name source, wrap errNoBTF when
// pahole made no types, and errIncompleteKey when nothing tells the
// release or architecture; a missing or too old pahole wraps
// pahole.ErrNotFound or pahole.ErrTooOld and says what to install.
func importDWARF(ctx context.Context, source string, read dwarfReader, opts *ImportOptions) (*Kernel, []error, error) {
	tool, err := pahole.Find(ctx)
	if err != nil {
		return nil, nil, &KernelError{Path: source, Err: err}
	}
	dc := openDWARFCache(source, tool, opts)
	defer dc.forwardWarnings()
	k, skipped, hit := dc.get()
	if hit && (opts == nil || !opts.CacheVerify) {
		return k, skipped, nil
	}
	// Verify mode keeps only a summary of the entry, so that one kernel
	// is held at a time, and compares it with pahole's kernel below.
	var cached dwarfSummary
	seed := maphash.MakeSeed()
	if hit {
		cached = summarizeDWARF(k, skipped, dc.member, seed)
		k, skipped = nil, nil
	}
	dir, remove, err := atomicfile.TempDir("", "btfembed-dwarf")
	if err != nil {
		return nil, nil, &KernelError{Path: source, Err: err}
	}
	defer remove()
	enc := newDWARFEncoder(ctx, tool, source, dir, opts)
	defer enc.stop()
	in, err := read(dir, enc.found)
	if err != nil {
		return nil, nil, &KernelError{Path: source, Err: err}
	}
	k, skipped, err = enc.kernel(in)
	if err != nil {
		return nil, nil, err
	}
	if hit {
		diff := cached.diff(summarizeDWARF(k, skipped, dc.member, seed))
		if diff == "" {
			return k, skipped, nil // the entry is pahole's kernel: nothing to store
		}
		opts.warn(fmt.Errorf("cache: entry of %s is not what pahole makes of it (%s): ignored, recomputed", source, diff))
	}
	dc.put(k, skipped)
	return k, skipped, nil
}

// memberPath names a file inside a source.
func memberPath(source, member string) string {
	if member == "" {
		return source
	}
	return source + ":" + member
}

// dwarfKey completes a DWARF input's key from its vmlinux: the ELF
// machine (EM_386 is i386, as BTFHub names it) and the banner's release
// and distribution; the options' key overrides.
func dwarfKey(in *dwarfInput, opts *ImportOptions) (told, error) {
	f, err := os.Open(in.VMLinux)
	if err != nil {
		return told{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return told{}, err
	}
	e, err := extract.InspectELF(f)
	if err != nil {
		return told{}, err
	}
	if !e.HasDWARF {
		return told{}, fmt.Errorf("%w: ELF without DWARF (.debug_info) nor .BTF: nothing to make BTF from", errNoBTF)
	}
	key := in.Key
	if key.key.Arch == "" {
		key.key.Arch = e.Arch
	}
	if b, ok := extract.FindBannerFile(f, st.Size()); ok {
		key = key.or(bannerTold("", b))
	}
	key = key.or(in.Fallback)
	if opts != nil {
		key = key.override(opts.Key)
	}
	if key.key.Arch == "" || key.key.Release == "" {
		return told{}, fmt.Errorf("%w: give -arch and -release", errIncompleteKey)
	}
	return key, nil
}

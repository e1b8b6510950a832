package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/regfile"
)

// ErrKernelNotSupported is wrapped by the error Select and Lookup return
// when neither the kernel nor the payload has BTF for the running kernel.
var ErrKernelNotSupported = errors.New("kernel not supported")

// NotSupportedError says which kernel could not be served and why. It
// wraps ErrKernelNotSupported.
type NotSupportedError struct {
	// Key is the kernel looked for.
	Key Key
	// Embedded is the number of kernels in the payload.
	Embedded int
	// Reason details why no entry fits, if more than "none matches".
	Reason string

	host hostBTF // what Select saw of the kernel's own BTF, for the advice
}

func (e *NotSupportedError) Error() string {
	// The key as the generate table and btfembed inspect spell it.
	msg := "kernel not supported: " + e.Key.String() + ": "
	if e.Reason != "" {
		return msg + e.Reason
	}
	return msg + fmt.Sprintf("none of the %d embedded kernels matches; ", e.Embedded) + e.fix()
}

func (e *NotSupportedError) Unwrap() error { return ErrKernelNotSupported }

//go:generate go tool stringer -type Source -linecomment

// Source says where a Selection's BTF comes from.
type Source int

const (
	// SourceKernel is the running kernel's own BTF (/sys/kernel/btf).
	SourceKernel Source = iota + 1 // kernel
	// SourceEmbedded is BTF from the payload.
	SourceEmbedded // embedded
	// SourceFamily is BTF from the payload of another build of the
	// kernel's family, which the caller allowed (SelectOptions.AllowFamily);
	// Selection.Family says which and why.
	SourceFamily // family
	// SourceFile is a BTF file the user supplied (SelectOptions.BTFFile,
	// $BTFEMBED_BTF_FILE).
	SourceFile // file
)

// Selection is the BTF chosen for one kernel.
type Selection struct {
	Source Source
	// Key is the embedded entry's key for SourceEmbedded and
	// SourceFamily (the family's member whose BTF is used), the running
	// kernel's for SourceKernel and SourceFile.
	Key Key
	// File is the BTF file's path, as given, for SourceFile.
	File string
	// Family says, for SourceFamily, which family serves the running
	// kernel and why; nil otherwise.
	Family *FamilySelection
	// Spec is the vmlinux BTF. For SourceEmbedded it is shared by every
	// Selection of the same entry while the Assets keeps the entry
	// loaded (btf.Spec is safe for concurrent use), and every type of it
	// is decoded already.
	Spec *btf.Spec
	// Modules holds module BTF by module name, ready for
	// ebpf.ProgramOptions.ExtraRelocationTargets. For SourceEmbedded, they
	// are the entry's modules, relocated from their distilled base onto
	// Spec. For SourceKernel, it is the kernel's BTF of every module the
	// payload knows of for this architecture and the kernel has BTF for,
	// plus embedded modules of the matching entry that the kernel has no
	// BTF for, relocated onto the kernel's. For SourceFile, they are the
	// matching entry's modules with a distilled base, relocated onto the
	// file's BTF.
	Modules map[string]*btf.Spec

	// Predicted says whether Predictions is btfembed's load prediction
	// for this kernel, the verdicts of the embedded entry
	// PredictionsFrom. It is true for SourceEmbedded. For SourceKernel,
	// it is true where the payload embeds the running kernel (the entry
	// Select would choose without the kernel's BTF): the verdicts were
	// computed from that entry's full BTF, which is the BTF the kernel
	// exposes, on the assumption every embedded selection rests on, that
	// an architecture and a release string (and the distribution, where
	// several ship the release) name one build. A kernel built from other
	// sources under a release the payload embeds breaks it either way.
	// It is false where the kernel is not embedded: the runtime does not
	// guess from a nearby release. It is false for SourceFile: an operator
	// supplies a file where the embedded BTF is not this kernel's. For
	// SourceFamily, it is true where every member of the family has the
	// same verdicts (FamilySelection).
	Predicted bool
	// PredictionsFrom is the key of the embedded entry whose verdicts
	// Predictions are, when Predicted: Key for SourceEmbedded; for
	// SourceKernel, the entry matching the running kernel, whose
	// distribution may differ from os-release's (a release embedded once
	// serves every distribution).
	PredictionsFrom Key
	// Predictions are the programs predicted not to load on this kernel
	// (VerdictFails) or that may not (VerdictUnknown), sorted by object
	// and program; a program not listed is predicted to load. Empty
	// unless Predicted. Prune and LoadAndAssign act on them.
	Predictions []Prediction

	objects map[string][]string // programs of each object of Predictions
	root    string              // HostRoot of a SourceKernel selection
	assets  *Assets             // what Check checks against
	// moduleBTF is the raw embedded module BTF behind Modules (for
	// SourceKernel, only the modules taken from the payload), sorted by
	// name.
	moduleBTF []module
}

// ModuleSpecs returns Modules sorted by module name.
func (s *Selection) ModuleSpecs() []*btf.Spec {
	names := make([]string, 0, len(s.Modules))
	for n := range s.Modules {
		names = append(names, n)
	}
	slices.Sort(names)
	specs := make([]*btf.Spec, len(names))
	for i, n := range names {
		specs[i] = s.Modules[n]
	}
	return specs
}

// SelectOptions tunes Select. A nil *SelectOptions means the defaults.
type SelectOptions struct {
	// ForceEmbedded skips the kernel's own BTF and $BTFEMBED_BTF_FILE.
	ForceEmbedded bool
	// BTFFile is a file of raw BTF (as /sys/kernel/btf/vmlinux, or a
	// decompressed BTFHub archive) to use ahead of the kernel's own BTF
	// and the payload, as libbpf's btf_custom_path: for a kernel the
	// payload lacks, or whose own BTF is wrong. Empty means
	// $BTFEMBED_BTF_FILE (BTFFileEnv), and none if that is empty too. The
	// path is the agent's, not under HostRoot. It must be a regular file
	// (not a symbolic link) of at most 32 MiB, which is checked as the
	// payload's BTF is and fully decoded; one that cannot be used is an
	// error, never a fallback. Setting it with ForceEmbedded is an error.
	BTFFile string
	// HostRoot is where the host's file system is mounted, for agents in
	// containers ("/host"): os-release and /sys/kernel/btf are read
	// under it. Empty means "/".
	HostRoot string
	// Arch, Release, Distro and Version override what uname and
	// os-release say (tests, tooling). Setting Distro or Version skips
	// os-release.
	Arch, Release, Distro, Version string
	// AllowFamily serves a kernel whose release the payload does not
	// embed, but whose family it records as stable for its objects, with
	// the BTF of an embedded build of that family (SourceFamily): a
	// Debian or Ubuntu patch release newer than the payload. Without it
	// such a kernel is not supported, and the error says the family
	// would serve it. See FamilySelection for what is assumed.
	AllowFamily bool
}

// Select chooses BTF for the running kernel. It returns a Selection or an
// error, never neither; see the package documentation for every outcome.
//
// In order: the BTF file opts.BTFFile or $BTFEMBED_BTF_FILE names, if any;
// else the kernel's own /sys/kernel/btf/vmlinux when it exists
// (unless opts.ForceEmbedded); else the embedded entry for the kernel's
// architecture and release, told apart by os-release ID (then ID_LIKE) and
// VERSION_ID when several distributions ship the release with different
// BTF; else an error wrapping ErrKernelNotSupported (a *NotSupportedError).
// Kernel BTF that exists but cannot be used (unreadable, not a regular
// file, corrupt) falls back to the embedded BTF; if there is none either,
// both errors are returned. The embedded BTF is decompressed and parsed
// once; later calls share it while the decode budget keeps it.
func (a *Assets) Select(opts *SelectOptions) (*Selection, error) {
	if opts == nil {
		opts = &SelectOptions{}
	}
	h, err := hostInfo(opts)
	if err != nil {
		return nil, err
	}
	path, err := btfFile(opts)
	if err != nil {
		return nil, err
	}
	if path != "" {
		return a.fileSelection(h, path)
	}
	var kernelErr error
	if !opts.ForceEmbedded {
		var sel *Selection
		err := a.retry(func() (err error) {
			sel, err = a.kernelSelection(h, opts.HostRoot)
			return err
		})
		if err == nil {
			return sel, nil
		}
		if !errors.Is(err, errNoKernelBTF) {
			kernelErr = fmt.Errorf("kernel BTF: %w", err)
		}
	}
	var sel *Selection
	err = a.retry(func() error {
		cands, err := a.p.Release(h.key.Arch, h.key.Release, a.bud)
		if err != nil {
			return err
		}
		if len(cands) == 0 {
			sel, err = a.familySelection(h, opts.AllowFamily, &NotSupportedError{Key: h.key, Embedded: a.p.Len()})
			return err
		}
		e, err := a.match(h, cands)
		if err != nil {
			return err
		}
		sel, err = a.selection(e)
		return err
	})
	if err != nil {
		adviseOn(err, opts)
		return nil, errors.Join(kernelErr, err)
	}
	return sel, nil
}

// match finds the entry for the host among cands, the entries of its
// arch and release. Only the one chosen becomes an assetEntry: a payload
// may embed a release for many distributions.
func (a *Assets) match(h host, cands []payload.Entry) (*assetEntry, error) {
	key := h.key
	switch len(cands) {
	case 0:
		return nil, &NotSupportedError{Key: key, Embedded: a.p.Len()}
	case 1:
		// A release string names one build; take it whatever the
		// distribution says.
		return a.entry(cands[0]), nil
	}
	var byDistro []payload.Entry
	for _, id := range append([]string{key.Distro}, h.idLike...) {
		byDistro = filterEntries(cands, func(k Key) bool { return sameID(k.Distro, id) })
		if len(byDistro) > 0 {
			break
		}
	}
	if len(byDistro) == 1 {
		return a.entry(byDistro[0]), nil
	}
	byVersion := filterEntries(byDistro, func(k Key) bool { return k.Version == key.Version })
	if len(byVersion) == 1 {
		return a.entry(byVersion[0]), nil
	}
	// Several remain: if they carry the same BTF, any will do.
	rest := cands
	if len(byVersion) > 0 {
		rest = byVersion
	} else if len(byDistro) > 0 {
		rest = byDistro
	}
	same := true
	for _, e := range rest {
		same = same && e.VMLinux == rest[0].VMLinux && slices.Equal(e.Modules, rest[0].Modules)
	}
	if same {
		return a.entry(rest[0]), nil
	}
	var have []string
	for i := range cands {
		have = append(have, strings.TrimSpace(cands[i].Key.Distro+" "+cands[i].Key.Version))
	}
	why := "os-release does not pick one"
	if h.osReleaseErr != nil {
		why = h.osReleaseErr.Error()
	}
	reason := fmt.Sprintf("release is embedded for %s; %s", strings.Join(have, ", "), why)
	return nil, &NotSupportedError{Key: key, Embedded: a.p.Len(), Reason: reason}
}

func filterEntries(es []payload.Entry, keep func(Key) bool) []payload.Entry {
	var out []payload.Entry
	for _, e := range es {
		if keep(e.Key) {
			out = append(out, e)
		}
	}
	return out
}

// errNoKernelBTF is kernelSelection's answer for a kernel without
// /sys/kernel/btf/vmlinux: the one case that quietly falls back to the
// embedded BTF.
var errNoKernelBTF = errors.New("kernel has no BTF")

// maxKernelBTF bounds the size of a kernel's vmlinux or module BTF file
// that Select reads: vmlinux BTF is under 16 MiB today.
const maxKernelBTF = 256 << 20

// kernelSelection loads the kernel's own BTF, or returns errNoKernelBTF
// when the kernel has none. Modules come from the kernel too; one the
// kernel has no BTF for (CONFIG_DEBUG_INFO_BTF_MODULES off) is taken from
// the matching embedded entry, if any, and relocated onto the kernel's
// vmlinux BTF. Every file is checked to be a regular file before it is
// opened, and opened non-blocking, so a FIFO or device cannot hang Select.
func (a *Assets) kernelSelection(h host, root string) (*Selection, error) {
	dir := filepath.Join(rootDir(root), "sys/kernel/btf")
	vmlinux := filepath.Join(dir, "vmlinux")
	present, err := kernelFile(vmlinux)
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, errNoKernelBTF
	}
	var spec *btf.Spec
	var raw []byte // vmlinux's bytes where read here
	if rootDir(root) == "/" {
		// cilium/ebpf caches this spec and uses it itself when
		// KernelTypes is nil, so there is one copy in the process.
		spec, err = btf.LoadKernelSpec()
	} else {
		raw, err = regfile.ReadFile(vmlinux, maxKernelBTF)
		if err == nil {
			spec, err = btf.LoadSplitSpecFromReader(bytes.NewReader(raw), nil)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", vmlinux, err)
	}
	sel := &Selection{Source: SourceKernel, Key: h.key, Spec: spec, root: root, assets: a}
	// The entry Select would choose without the kernel's BTF: its
	// modules serve where the kernel has none, and its verdicts were
	// computed from this kernel's BTF.
	e, err := a.hostEntry(h)
	if err != nil {
		return nil, err
	}
	for _, name := range a.p.ModuleNames(h.key.Arch) {
		path := filepath.Join(dir, name)
		present, err := kernelFile(path)
		if err != nil {
			return nil, err
		}
		if !present {
			continue
		}
		mod, err := loadModuleFile(path, spec)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", path, err)
		}
		if sel.Modules == nil {
			sel.Modules = map[string]*btf.Spec{}
		}
		sel.Modules[name] = mod
	}
	if e == nil {
		return sel, nil
	}
	base := func() (*payload.BTF, error) {
		// Under "/", cilium/ebpf loaded vmlinux and keeps none of its
		// bytes where they can be reached: it is read again, only when a
		// module needs relocating onto it.
		if raw == nil {
			if raw, err = regfile.ReadFile(vmlinux, maxKernelBTF); err != nil {
				return nil, err
			}
		}
		kernel, err := rawbtf.Parse(raw, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", vmlinux, err)
		}
		return payload.KernelBTF(kernel), nil
	}
	if err := a.embeddedModules(e, sel, vmlinux, base); err != nil {
		return nil, err
	}
	if err := a.predict(sel, e); err != nil {
		return nil, err
	}
	return sel, nil
}

// hostEntry is match for a selection that does not need the embedded
// entry: nil where the payload has none for the host.
func (a *Assets) hostEntry(h host) (*assetEntry, error) {
	cands, err := a.p.Release(h.key.Arch, h.key.Release, a.bud)
	if err != nil {
		return nil, err
	}
	e, err := a.match(h, cands)
	if errors.Is(err, ErrKernelNotSupported) {
		return nil, nil
	}
	return e, err
}

// kernelFile says whether path exists, and fails if it exists but is not
// a regular file.
func kernelFile(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	return true, nil
}

// loadModuleFile parses a kernel module's BTF file, split over base.
func loadModuleFile(path string, base *btf.Spec) (*btf.Spec, error) {
	b, err := regfile.ReadFile(path, maxKernelBTF)
	if err != nil {
		return nil, err
	}
	return btf.LoadSplitSpecFromReader(bytes.NewReader(b), base)
}

// embeddedModules adds to a SourceKernel or SourceFile selection the
// distilled modules of the matching embedded entry e that the selection
// lacks, relocated onto its vmlinux BTF (the file at onto), which base
// gives parsed: it is called only if a module needs it. Only the modules'
// blobs are decoded, not the entry's vmlinux BTF, which a selection of
// another vmlinux does not need. The vmlinux BTF is not the payload's: the
// modules are charged to the budget while they load, not the vmlinux types
// they reach, and the Selection, the caller's, is not charged.
func (a *Assets) embeddedModules(e *assetEntry, sel *Selection, onto string, base func() (*payload.BTF, error)) error {
	var lacking []payload.EntryModule
	for _, m := range e.Modules {
		if _, ok := sel.Modules[m.Name]; !ok && m.HasBase {
			lacking = append(lacking, m)
		}
	}
	if len(lacking) == 0 {
		return nil
	}
	vm, err := base()
	if err != nil {
		return err
	}
	c := &charges{bud: a.bud}
	defer c.end(true)
	mods := make([]module, len(lacking))
	for i, m := range lacking {
		if mods[i], err = a.moduleBlobs(m, c); err != nil {
			return fmt.Errorf("embedded BTF for %s: %w", e.Key, err)
		}
	}
	specs, err := loadModules(mods, vm, sel.Spec, false, c)
	if err != nil {
		return fmt.Errorf("embedded BTF for %s onto %s: %w", e.Key, onto, err)
	}
	if sel.Modules == nil {
		sel.Modules = map[string]*btf.Spec{}
	}
	maps.Copy(sel.Modules, specs)
	sel.moduleBTF = append(sel.moduleBTF, mods...)
	return nil
}

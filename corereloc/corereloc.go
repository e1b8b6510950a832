package corereloc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/plural"
)

// ErrMismatch is what Verify's error wraps when some relocation's fixup
// differs between the full and the minimized BTF.
var ErrMismatch = errors.New("minimized BTF relocates differently")

// Object is a BPF ELF object's CO-RE relocations, as Load read them.
type Object struct {
	obj *coremin.Object
}

// Load reads the CO-RE relocations (.BTF and .BTF.ext) of the BPF ELF
// objects at paths. An object without .BTF.ext, or whose .BTF.ext holds no
// CO-RE relocations, has none; that is not an error. Errors name the file.
func Load(paths ...string) ([]*Object, error) {
	loaded, err := coremin.Load(paths...)
	if err != nil {
		return nil, err
	}
	objs := make([]*Object, len(loaded))
	for i, o := range loaded {
		objs[i] = &Object{obj: o}
	}
	return objs, nil
}

// Path is the file the object was loaded from.
func (o *Object) Path() string { return o.obj.Path }

// Relocations is how many instructions the object's CO-RE relocations
// patch (records of .BTF.ext); an object with none needs no kernel BTF.
func (o *Object) Relocations() int { return len(o.obj.Sites) }

// Minimized is the BTF Minimize wrote for one kernel.
type Minimized struct {
	// VMLinux is standalone BTF: the vmlinux types the relocations need.
	VMLinux []byte
	// Modules are split BTF over VMLinux, one per module given to
	// Minimize, in the same order.
	Modules [][]byte
	// Unresolved are the relocations that are ambiguous on the kernel, or
	// that no candidate can compute, one error per relocated instruction
	// naming the object, section, offset and relocation. A relocation
	// whose type is missing from the kernel is no error: the loader
	// poisons it, with the minimized BTF as with the full one.
	Unresolved []error
}

// Minimize writes the smallest BTF that resolves every CO-RE relocation
// of objs the way the kernel's full BTF does, for cilium/ebpf and for
// libbpf: what "bpftool gen min_core_btf" does. vmlinux is the kernel's
// raw standalone BTF (/sys/kernel/btf/vmlinux, or the .BTF section of a
// vmlinux); modules, if any, are raw split BTF over it, and are minimized
// jointly with it so that their type IDs stay consistent. The BTF is
// indexed, not decoded in full.
func Minimize(objs []*Object, vmlinux []byte, modules ...[]byte) (*Minimized, error) {
	base, err := coremin.NewTarget(vmlinux, nil)
	if err != nil {
		return nil, fmt.Errorf("vmlinux BTF: %w", err)
	}
	targets := []*coremin.Target{base}
	for i, raw := range modules {
		t, err := coremin.NewTarget(raw, base)
		if err != nil {
			return nil, fmt.Errorf("module BTF %d: %w", i, err)
		}
		targets = append(targets, t)
	}
	res, err := coremin.Match(unwrap(objs), targets)
	if err != nil {
		return nil, err
	}
	var m Minimized
	for ref, o := range res.Sites() {
		if o.Status == coremin.Ambiguous || o.Status == coremin.Failed {
			m.Unresolved = append(m.Unresolved, fmt.Errorf("%s: %w", res.Objects[ref.Object].SiteString(ref.Site), o.Err))
		}
	}
	m.VMLinux, m.Modules, err = coremin.Minimize(res)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// Verify is the correctness oracle: for every program of every object it
// runs cilium/ebpf's btf.CORERelocate once against full and once against
// minimized (each vmlinux first, then modules) and returns an error
// wrapping ErrMismatch that names every relocation whose fixup differs.
// Errors count as results: a program both fail to relocate is no
// mismatch. A target_type_id fixup is compared by the kind and name of
// the type its ID refers to, since minimizing renumbers types.
func Verify(objs []*Object, full, minimized []*btf.Spec) error {
	ms, err := coremin.Verify(unwrap(objs), full, minimized)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		return nil
	}
	lines := make([]string, len(ms))
	for i, m := range ms {
		lines[i] = m.String()
	}
	return fmt.Errorf("%w: %s: %s", ErrMismatch, plural.Count(len(ms), "relocation"), strings.Join(lines, "; "))
}

// unwrap returns the objects the internal package works on.
func unwrap(objs []*Object) []*coremin.Object {
	in := make([]*coremin.Object, len(objs))
	for i, o := range objs {
		in[i] = o.obj
	}
	return in
}

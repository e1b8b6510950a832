package runtime

import "github.com/cilium/ebpf"

// CollectionOptions selects BTF like Select and returns collection options
// that use it for CO-RE relocations: Programs.KernelTypes is the selected
// vmlinux BTF and Programs.ExtraRelocationTargets the module BTF, sorted by
// module name.
//
// When the selection is the running kernel's own BTF read from the usual
// place (no HostRoot), KernelTypes stays nil: cilium/ebpf then uses that
// same BTF and the BTF of every loaded module itself, from its own cache,
// and ExtraRelocationTargets holds only modules taken from the payload.
func (a *Assets) CollectionOptions(opts *SelectOptions) (*ebpf.CollectionOptions, *Selection, error) {
	sel, err := a.Select(opts)
	if err != nil {
		return nil, nil, err
	}
	co := &ebpf.CollectionOptions{}
	if sel.Source == SourceKernel && rootDir(sel.root) == "/" {
		for _, m := range sel.moduleBTF {
			co.Programs.ExtraRelocationTargets = append(co.Programs.ExtraRelocationTargets, sel.Modules[m.name])
		}
		return co, sel, nil
	}
	co.Programs.KernelTypes = sel.Spec
	co.Programs.ExtraRelocationTargets = sel.ModuleSpecs()
	return co, sel, nil
}

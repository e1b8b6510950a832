package btfrelocate

import (
	"bytes"
	"fmt"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/safetext"
)

// LoadModules reads embedded modules' BTF over a vmlinux BTF, for
// ebpf.ProgramOptions.ExtraRelocationTargets, keyed by module name. Split
// BTF without a distilled base is read as it is; split BTF with one is
// first relocated onto the vmlinux BTF (Relocate, the semantics of libbpf's
// btf__relocate), so one embedded module serves whichever vmlinux
// BTF was selected. vmlinux must have been loaded from vmlinuxRaw, which
// is parsed once for all modules, and only if one needs relocating.
//
// Each module is read over its own copy of vmlinux: cilium/ebpf v0.22
// decodes a split spec's base types under the split's lock, not the
// base's, so a base shared with other users races with them (found with
// go test -race, the runtime's TestModulesConcurrent). The runtime
// loads every selected entry's modules with it, and the generator loads
// minimized modules with it to verify them as the runtime will.
func LoadModules(mods []Module, vmlinuxRaw []byte, vmlinux *btf.Spec) (map[string]*btf.Spec, error) {
	specs := make(map[string]*btf.Spec, len(mods))
	var base *Base
	for _, m := range mods {
		var spec *btf.Spec
		var err error
		if m.Base == nil {
			spec, err = btf.LoadSplitSpecFromReader(bytes.NewReader(m.Split), vmlinux.Copy())
		} else {
			if base == nil {
				if base, err = NewBase(vmlinuxRaw); err != nil {
					return nil, fmt.Errorf("vmlinux BTF: %w", err)
				}
			}
			spec, err = LoadRelocated(m.Split, m.Base, base, vmlinux.Copy(), nil)
		}
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", safetext.Escape(m.Name), err)
		}
		specs[m.Name] = spec
	}
	return specs, nil
}

// Module is the BTF of one kernel module, kept for an entry.
type Module struct {
	// Name is the module name as in /sys/kernel/btf/<name>.
	Name string
	// Base is distilled base BTF describing the vmlinux types Split
	// refers to, so Split can be relocated onto another vmlinux. Nil
	// means Split refers directly to the entry's VMLinux.
	Base []byte
	// Split is the module's split BTF.
	Split []byte
}

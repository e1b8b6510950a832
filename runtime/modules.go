package runtime

import (
	"bytes"
	"fmt"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// LoadModule reads an embedded module's BTF over a vmlinux BTF, for
// ebpf.ProgramOptions.ExtraRelocationTargets. Split BTF without a distilled
// base is read as it is; split BTF with one is first relocated onto the
// vmlinux BTF (distill.Relocate, the semantics of libbpf's btf__relocate),
// so one embedded module serves whichever vmlinux BTF was selected.
// vmlinux must have been loaded from vmlinuxRaw.
//
// The module is read over its own copy of vmlinux: cilium/ebpf v0.22
// decodes a split spec's base types under the split's lock, not the
// base's, so a base shared with other users races with them (found with
// go test -race, TestModulesConcurrent).
func LoadModule(m Module, vmlinuxRaw []byte, vmlinux *btf.Spec) (*btf.Spec, error) {
	vmlinux = vmlinux.Copy()
	if m.Base == nil {
		return btf.LoadSplitSpecFromReader(bytes.NewReader(m.Split), vmlinux)
	}
	base, err := rawbtf.Parse(vmlinuxRaw, nil)
	if err != nil {
		return nil, fmt.Errorf("vmlinux BTF: %w", err)
	}
	dist, err := rawbtf.Parse(m.Base, nil)
	if err != nil {
		return nil, fmt.Errorf("distilled base BTF: %w", err)
	}
	split, err := rawbtf.Parse(m.Split, dist)
	if err != nil {
		return nil, fmt.Errorf("split BTF: %w", err)
	}
	return distill.LoadRelocated(split, base, vmlinux, nil)
}

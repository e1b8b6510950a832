package corpus

import (
	"fmt"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

type btfSpec = rawbtf.Spec

// parseKernel validates a kernel's vmlinux BTF; the index serves the
// checks of its modules and cilium/ebpf's load of it (btfload.Spec).
func parseKernel(vmlinux []byte) (*btfSpec, error) {
	s, err := rawbtf.Parse(vmlinux, nil)
	if err != nil {
		return nil, fmt.Errorf("parse BTF: %w", err)
	}
	return s, nil
}

// countTypes returns the number of types a validated spec defines itself.
func countTypes(s *rawbtf.Spec) int { return int(s.NextID() - s.FirstID()) }

// checkModule validates a module's split BTF over its kernel's vmlinux:
// it parses over it, and its names point at the vmlinux's strings as only
// split BTF built over that vmlinux does (rawbtf.CheckSplitNames).
func checkModule(btf []byte, base *btfSpec) error {
	s, err := extract.ParseBTF(btf, base)
	if err == nil {
		err = s.CheckSplitNames()
	}
	if err != nil {
		return fmt.Errorf("split BTF over the kernel's vmlinux: %w", err)
	}
	return nil
}

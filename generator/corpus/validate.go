package corpus

import (
	"fmt"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

type btfSpec = rawbtf.Spec

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

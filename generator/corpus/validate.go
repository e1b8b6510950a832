package corpus

import (
	"fmt"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

type btfSpec = rawbtf.Spec

// countTypes returns the number of types a validated spec defines itself.
func countTypes(s *rawbtf.Spec) int { return int(s.NextID() - s.FirstID()) }

// checkModule validates a module's split BTF over its kernel's vmlinux.
func checkModule(btf []byte, base *btfSpec) error {
	if _, err := extract.ParseBTF(btf, base); err != nil {
		return fmt.Errorf("split BTF over the kernel's vmlinux: %w", err)
	}
	return nil
}

package btfrelocate

import (
	"fmt"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Base is standalone base BTF, usually a kernel's vmlinux BTF, indexed
// once (one pass over its type offsets and names, no decoding of types)
// for any number of Distill, Relocate and LoadRelocated calls, from
// several goroutines.
type Base struct {
	spec *rawbtf.Spec
}

// NewBase parses raw standalone BTF, such as /sys/kernel/btf/vmlinux. raw
// must not be modified while the Base is in use.
func NewBase(raw []byte) (*Base, error) {
	spec, err := rawbtf.Parse(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("base BTF: %w", err)
	}
	return &Base{spec: spec}, nil
}

// ParseSplit parses raw split BTF over b.
func (b *Base) ParseSplit(raw []byte) (*rawbtf.Spec, error) {
	s, err := rawbtf.Parse(raw, b.spec)
	if err != nil {
		return nil, fmt.Errorf("split BTF: %w", err)
	}
	return s, nil
}

// ParseOverDistilled parses split BTF over the distilled base it was
// made with.
func ParseOverDistilled(split, distilledBase []byte) (*rawbtf.Spec, error) {
	dist, err := rawbtf.Parse(distilledBase, nil)
	if err != nil {
		return nil, fmt.Errorf("distilled base BTF: %w", err)
	}
	s, err := rawbtf.Parse(split, dist)
	if err != nil {
		return nil, fmt.Errorf("split BTF: %w", err)
	}
	return s, nil
}

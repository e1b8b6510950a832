package coremin

import (
	"fmt"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Target is a kernel's BTF as Match reads it: vmlinux BTF, or a module's
// split BTF over a vmlinux Target. Making one indexes the BTF in one pass
// (type offsets and names, no decoding of types); a Target is read-only and
// is meant to be made once per kernel and matched against any number of
// objects, from several goroutines.
type Target struct {
	spec *rawbtf.Spec
}

// NewTarget parses raw BTF, such as /sys/kernel/btf/vmlinux, or the .BTF
// section of a vmlinux or a kernel module. With a nil base, raw is
// standalone (vmlinux) BTF; otherwise it is a module's split BTF over
// base, which must be a vmlinux Target. raw must not be modified while the
// Target is in use.
func NewTarget(raw []byte, base *Target) (*Target, error) {
	var baseSpec *rawbtf.Spec
	if base != nil {
		if base.spec.Base() != nil {
			return nil, fmt.Errorf("base BTF is split BTF itself")
		}
		baseSpec = base.spec
	}
	spec, err := rawbtf.Parse(raw, baseSpec)
	if err != nil {
		return nil, err
	}
	return &Target{spec: spec}, nil
}

// TargetOf is the Target of BTF already parsed, standalone or split
// over another Target's spec.
func TargetOf(spec *rawbtf.Spec) *Target { return &Target{spec: spec} }

// Offers reports whether t defines a type that some relocation of objs
// looks for (a type with the essential name of a relocated local type).
// A module Target that offers none changes no relocation's outcome, so a
// caller can leave it out of Match and save the decoding.
func (t *Target) Offers(objs []*Object) bool {
	return len(t.spec.LookupEssentialNames(essentialNames(objs))) > 0
}

package distill

import "github.com/btfembed/btfembed/internal/btfrelocate"

// Internals the tests of package distill_test check against: the
// functions on parsed BTF behind the byte-level API, and helpers.
var (
	Describe          = btfrelocate.Describe
	MaxChain          = maxChain
	DistillSpec       = distillSpec
	RelocateSpec      = relocateSpec
	LoadRelocatedSpec = loadRelocatedSpec
)

package distill

import (
	"github.com/btfembed/btfembed/internal/btfdistill"
	"github.com/btfembed/btfembed/internal/btfrelocate"
)

// The machinery behind the byte-level API, on parsed BTF, which the tests
// of package distill_test check against: the internal packages' own
// functions, one definition each.
var (
	Describe          = btfrelocate.Describe
	MaxChain          = btfrelocate.MaxChain
	ErrNotSplit       = btfrelocate.ErrNotSplit
	DistillSpec       = btfdistill.DistillSpec
	RelocateSpec      = btfrelocate.RelocateSpec
	LoadRelocatedSpec = btfrelocate.LoadRelocatedSpec
)

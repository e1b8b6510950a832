package distill

// Internals the tests of package distill_test check against: the
// functions on parsed BTF behind the byte-level API, and helpers.
var (
	Describe          = describe
	MaxChain          = maxChain
	DistillSpec       = distillSpec
	RelocateSpec      = relocateSpec
	LoadRelocatedSpec = loadRelocatedSpec
)

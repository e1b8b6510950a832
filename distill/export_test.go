package distill

// Internals the tests of package distill_test check against. Those tests
// are external because they read modules with generator/corpus, which
// imports this package (through runtime): an internal test importing it
// would be an import cycle.
var (
	Describe = describe
	MaxChain = maxChain
)

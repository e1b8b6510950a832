// Package payloadtest builds payloads for the tests and benchmarks of the
// packages that write and read them (internal/payload, its encoder, the
// runtime): the testdata kernels as the generator would embed them, and
// their encoding. Only _test files import it, so no binary links the
// encoder through it.
//
// A test binary that imports it takes a -minbtf flag naming another tree
// of minimized BTF to use instead of testdata/minbtf, for benchmarks at a
// larger scale.
package payloadtest

// Package kernelkey names kernel builds the same way on both sides of
// btfembed: the generator keys the kernels it embeds (and a corpus the
// kernels it holds) with Key, and the runtime keys the running kernel with
// it, its architecture spelled by NormalizeArch, so the two agree.
//
// It is public because a Key crosses the public API of both sides, and
// nothing else here does:
//
//   - Key: runtime.Key is an alias of it (Selection.Key, Assets.Kernels
//     and Lookup), and corpus.Kernel.Key names a corpus entry, so corpus
//     tools and agents share one type.
//   - NormalizeArch: an agent or tool that builds a Key for Assets.Lookup,
//     or compares one with uname -m, spells the architecture as the
//     payload does.
//
// The architecture table behind NormalizeArch is internal/kernelarch.
//
// It depends on the standard library and the module's small internal
// helpers only, so corpus tools and agents can share it without linking
// anything else.
package kernelkey

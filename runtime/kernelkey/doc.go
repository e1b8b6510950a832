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
//   - Family, FamilyOf: the series of builds a distribution release ships
//     that differ by ABI number only (Debian's 6.1.0-47-amd64,
//     6.1.0-50-amd64, ...). The generator's report and the payload name
//     the families stable for an agent's objects with it, and the
//     runtime's Selection.Family the family that served a build the
//     payload does not embed.
//
// The architecture table behind NormalizeArch is internal/kernelarch.
//
// It depends on the standard library and the module's small internal
// helpers only, so corpus tools and agents can share it without linking
// anything else.
package kernelkey

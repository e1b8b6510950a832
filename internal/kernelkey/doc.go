// Package kernelkey names kernel builds the same way on both sides of
// btfembed: the generator keys the kernels it embeds (and a corpus the
// kernels it holds) with Key, and the runtime keys the running kernel with
// it, its architecture spelled by NormalizeArch, so the two agree.
//
// Family and FamilyOf name the series of builds a distribution release
// ships that differ by ABI number only (Debian's 6.1.0-47-amd64,
// 6.1.0-50-amd64, ...): the generator's report and the payload name the
// families stable for an agent's objects with them, and the runtime the
// family that served a build the payload does not embed.
//
// It is internal: users meet Key and Family as runtime.Key and
// runtime.Family (aliases), in Selection, Assets.Kernels and Lookup, and
// in generator/corpus's import results, so agents and corpus tools share
// one type. NormalizeArch and FamilyOf have no user outside the module:
// Assets.Lookup spells a caller's architecture itself.
//
// The architecture table behind NormalizeArch is internal/kernelarch.
//
// It depends on the standard library and the module's small internal
// helpers only, so agents link nothing else through it.
package kernelkey

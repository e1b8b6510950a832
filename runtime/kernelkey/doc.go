// Package kernelkey names kernel builds the same way on both sides of
// btfembed: the generator keys the kernels it embeds (and a corpus the
// kernels it holds) with Key, and the runtime keys the running kernel with
// it, its architecture spelled by NormalizeArch, so the two agree.
//
// It depends on the standard library only, so corpus tools and agents can
// share it without linking anything else.
package kernelkey

package vmtest_test

// Kernels built without BTF have none anywhere until someone makes it
// from their DWARF with pahole, as BTFHub does. The field test imports
// theirs into its corpus the way a user would, through `btfembed corpus
// import`, with package dwarfkernel, which caches the imported entry by
// the digest of the DWARF input.

// nobtfDir is the corpus's kernel without BTF (see its README).
const nobtfDir = "nobtf/x86_64"

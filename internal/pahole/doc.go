// Package pahole runs pahole (the dwarves project) to make BTF from a
// kernel's DWARF, as the kernel's own build and BTFHub do: btfembed never
// encodes DWARF itself.
//
// [Find] locates pahole (the PAHOLE environment variable, as the kernel's
// Makefile names it, or pahole on PATH) and checks its version; a missing
// or too old pahole is an error wrapping [ErrNotFound] or [ErrTooOld] that
// names the Debian package to install. [Tool.Encode] runs it on one ELF
// file, a vmlinux or a module (split BTF over the vmlinux's, as the
// kernel's --btf_base build of modules makes it), within time and memory
// limits (below), and returns the BTF, checked to hold types.
//
// # Flags
//
// [Flags] picks the flags from the kernel's version and pahole's, the way
// the kernel's scripts/pahole-flags.sh (5.15 to 6.9) and scripts/Makefile.btf
// (6.10 on) do, so the BTF is the one the kernel's build would have made:
//
//	pahole     kernel         flag                            why
//	any        any            -F dwarf                        read DWARF only, never a .BTF already there
//	1.22+      5.17+          -j                              the kernel's build encodes in parallel from 5.17 (one thread per CPU); not for a module (see Flags)
//	1.22-1.25  5.13+          --btf_gen_floats                BTF_KIND_FLOAT exists from 5.13
//	1.24-1.25  before 6.0     --skip_encoding_btf_enum64      BTF_KIND_ENUM64 exists from 6.0 (the stable trees' script)
//	1.24-1.25  before 5.16    --skip_encoding_btf_decl_tag    BTF_KIND_DECL_TAG exists from 5.16
//	1.24-1.25  before 5.17    --skip_encoding_btf_type_tag    BTF_KIND_TYPE_TAG exists from 5.17
//	1.24+      any            --lang_exclude=rust             Rust compilation units are not encoded (PAHOLE_HAS_LANG_EXCLUDE)
//	1.25       6.3+           --skip_encoding_btf_inconsistent_proto --btf_gen_optimized
//	1.26+      any            --btf_features=encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,consistent_func
//	                          less the kinds the kernel predates (float, enum64, decl_tag, type_tag as above)
//
// A kernel whose version is unknown is taken as the newest. pahole before
// 1.22 is refused: 1.18 to 1.21 mis-encode zero-sized per-CPU variables
// (the kernel's script skips all variables for them) and have no -j.
//
// # Memory
//
// pahole holds the DWARF it reads: measured with /usr/bin/time -v, 195 MiB
// for a 107 MB vmlinux, 437 MiB for a 588 MB one, 14 MiB for a small
// module. Each run reserves its estimated footprint from the memory budget
// of package extract (docs/threat-model.md) before it starts and gives it
// back when pahole exits, so the budget bounds how many run at once: one
// large vmlinux at a time, many small modules.
//
// # Limits
//
// The DWARF may be crafted: a 10.7 MB ELF had pahole at 1 GB after 240 s,
// and a pahole that hangs would hang the import. Each run is bounded by
// its input's size (the file's, with compressed debug sections counted
// inflated) and killed with its process group at the first limit it
// passes, with an error wrapping ErrTimeLimit or ErrMemoryLimit that names
// the file, the limit and how it follows from the input:
//
//	limit                              value                                         107 MB vmlinux, 2 CPUs  measured on it
//	wall clock                         2 min + 3 s per MiB                           7 min                   2.2-5.5 s here, 13-18 s loaded
//	resident memory, sampled / 50 ms   512 MiB + 2 x input + 16 MiB per thread       764 MiB                 199 MiB (j16: 235 MiB)
//	RLIMIT_DATA, set with prlimit(2)   2 x the above + the threads' stacks           1551 MiB                240 MiB (j16: 376 MiB)
//
// The resident limit is 2.9 to 3.9 times the peak RSS of every real input
// measured (also 424 MB for a 316 MB vmlinux, 453 MB for a 588 MB one) and
// the time limit 24 to 44 times their slowest wall clock, so a loaded or
// slow machine is not stopped; a crafted input of 10.7 MB is stopped at
// 580 MiB or 150 s. VmData counts the mapped input and 8 MiB of stack for
// each of pahole's threads (one per online CPU plus 10 % with -j), hardly
// touched, so the kernel-enforced limit is set above the sampled one: it
// catches a growth faster than the sampling, and what pahole starts.
//
// pahole gets its file last, absolute, after "--", so that a file named
// "--help" or "-V" is read as a file.
package pahole

// Package generator is the main job of btfembed: it streams a kernel BTF
// corpus, computes for every kernel the minimal BTF that a set of CO-RE
// BPF objects needs, proves each result with cilium/ebpf's own relocation
// code, and emits Go source that embeds the results.
//
// Each object is checked against, and embedded for, only the kernels of the
// architectures it pairs with (pair.go): bpf2go's bpf_x86_bpfel.o with
// x86 kernels, a generic bpf_bpfel.o with every little-endian kernel.
// Result.ForArch splits a run into what each GOARCH's binary embeds.
//
// Per kernel, in parallel (Args.Workers):
//
//  1. the kernel's vmlinux BTF and module BTF are parsed lazily
//     (internal/rawbtf) and every relocation of every object is matched
//     against them (internal/coremin's Match), vmlinux first, then modules;
//  2. the union of what the relocations relied on is written as minimized
//     vmlinux BTF plus minimized module split BTF over it
//     (internal/coremin's Minimize), so module type IDs stay consistent;
//  3. module parts are distilled (internal/btfdistill, what
//     distill.Distill calls) so that one blob serves any vmlinux it
//     relocates onto at run time;
//  4. the oracle runs: for every program of every object, cilium/ebpf's
//     btf.CORERelocate against the minimized BTF (modules relocated from
//     their distilled form, as the runtime will) must give the fixups it
//     gives against the full BTF. A difference is a bug in btfembed and
//     fails the run.
//
// The results are sorted by kernel key and written through
// internal/payload's encoder, which owns the payload format; the command wraps
// them in Go source (internal/emit). The same inputs give the same bytes whatever the number
// of workers.
//
// With Args.CacheDir, a kernel whose files and objects were seen before
// is not processed again: its verified result comes from the cache, and a
// kernel whose BTF was read before (but not for these objects) is not
// decompressed again (docs/cache.md). With Args.Shards, one run processes
// one shard of the corpus and Result.WritePart saves it; Merge joins the
// parts into what one run gives (docs/sharding.md). Neither changes a
// byte of the output.
//
// # API
//
// The command is a thin layer over this package, and a Go program that
// generates as part of its own build calls the same: Generate runs the
// pipeline on Args and returns a Result, whose Payload is what to embed
// and whose Report (one KernelReport per kernel, with ModuleReport,
// RelocationReport and ProgramReport rows, and the Skipped corpus
// entries) says what happened; Report.WriteTable prints it as the
// command does (TableOptions), WriteJSON writes it for machines, and
// CheckLoadable fails with ErrUnloadable where programs are predicted not
// to load (a ProgramReport whose Verdict is "fails"; docs/predictions.md
// says what each verdict and reason kind means). Report.Families
// (FamilyReport) says which kernel families the objects relocate alike on
// every embedded member of (KernelReport.Fixups digests a kernel's
// fixups), which the payload records for the runtime's
// SelectOptions.AllowFamily. Progress reports a run's progress to
// Args.Progress. A run's error names what failed: a corpus with no kernel
// for the objects' architectures, or a result the oracle rejects (a bug
// in btfembed); no caller branches on either.
// Sharding is part of the API because a CI matrix runs it: Args.Shard
// selects a shard, Result.WritePart saves it, and Merge joins the Part
// files (wrapping ErrPart for a damaged or mismatched one); the bytes of
// a part are private to one btfembed build, the calls are not.
package generator

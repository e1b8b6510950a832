// Package distill makes kernel-module BTF survive a change of its vmlinux.
//
// Module BTF is split BTF: its type IDs continue after the last ID of one
// exact vmlinux build, and its references into vmlinux are bare IDs, so the
// same bytes mean nothing over another build. Distilled base BTF, the
// .BTF.base section of Linux 6.11+ and pahole 1.28+, fixes that: a small
// standalone blob that describes, by kind, name and (where it matters) size,
// every vmlinux type the split BTF refers to. Split BTF over its distilled
// base can later be relocated onto any vmlinux that has matching types.
//
// [Distill] is libbpf's btf__distill_base and [Relocate] its btf__relocate,
// on raw BTF bytes; cilium/ebpf's btf.LoadSplitSpecFromReader loads
// Relocate's result. A vmlinux BTF is parsed once into a [Base] for any
// number of modules, and indexed rather than decoded, so neither call
// decodes vmlinux in full. The rules, and where they differ from libbpf's, are in docs/distill.md of the
// repository. The main differences: Relocate reports every type it cannot
// map in one [*UnmappedError] instead of stopping at the first, and it has
// an opt-in layout-compatible mode ([RelocateOptions.LayoutCompatible]) that
// accepts differences which cannot change the memory layout of the module's
// types, such as the signedness of char, which changed in Linux 6.2 and
// makes libbpf refuse every 6.1 module on a newer kernel.
//
// Reading module files (.ko, compressed or not, with their .BTF.base) is
// the command's (`btfembed distill`, through the module's internal/corpus);
// a program that has a .ko reads its .BTF and .BTF.base sections with
// debug/elf.
//
// The kernel documents .BTF.base in Documentation/bpf/btf.rst, section 4.4
// (https://docs.kernel.org/bpf/btf.html#btf-base-section).
//
// # API
//
// `btfembed distill` and `relocate` call it, and so can any Go program
// that ships module BTF: Distill and Relocate on a Base that NewBase
// parsed, Relocate tuned by RelocateOptions and failing with an
// UnmappedError that lists every type it cannot map. The implementation
// is internal (internal/btfdistill and internal/btfrelocate), which the
// generator and the runtime call directly; this package is its face.
package distill

// Package btfdistill separates a kernel module's split BTF from the
// vmlinux BTF it was built over, the semantics of libbpf's
// btf__distill_base: a distilled base that names the vmlinux types the
// module refers to, and the module's BTF rewritten over it, which
// internal/btfrelocate later moves onto another vmlinux.
//
// It is internal so that the generator and the public package distill
// (its face: Distill on raw bytes) share one implementation, and apart
// from internal/btfrelocate so that the runtime, which relocates but never
// distills, does not link it. The rules, and where they differ from
// libbpf's, are in docs/distill.md.
package btfdistill

// Package rawbtf reads and writes BTF (BPF Type Format) on the wire, without
// decoding more than the caller asks for.
//
// btfembed touches a few hundred types of a kernel's ~100,000 per run.
// Parse makes one linear pass over the type section to record where every
// type starts; names, the essential-name index and type bodies are read on
// demand through the cheap Type view. Measured on the 4.35 MB BTF of
// Debian's 6.1.0-47-amd64, 2 cores shared with other work
// (go test ./internal/rawbtf -run X -bench 'Parse$|Cilium' -benchmem):
// Parse 6.9-8.7 ms, 0.41 MB and 2 allocations; cilium/ebpf v0.22's
// btf.LoadSpecFromReader, which decodes types lazily, 13-15 ms, 11.4 MB
// and 47 allocations; decoding every type through it 276-339 ms and 41 MB.
// The generator still pays cilium/ebpf's load once per kernel where a
// *btf.Spec is the currency: fullTargets in generator/kernel.go loads the
// full vmlinux (and module) BTF for the oracle (btf.CORERelocate) and the
// load prediction, which decode the types the relocations reach, and the
// minimized BTF is loaded again to verify it. Encoder writes
// standalone or split BTF, which cilium/ebpf's Builder cannot (it writes
// standalone BTF only).
//
// Both byte orders are read and written. Headers of 24 bytes (the classic
// layout) and 32 bytes (with the kind layout section that newer libbpf and
// kernels emit, so a reader can skip kinds it does not know) are accepted.
//
// The format is specified in the kernel tree, Documentation/bpf/btf.rst
// (https://docs.kernel.org/bpf/btf.html).
package rawbtf

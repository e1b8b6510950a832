// Package rawbtf reads and writes BTF (BPF Type Format) on the wire, without
// decoding more than the caller asks for.
//
// btfembed touches a few hundred types of a kernel's ~100,000 per run, so a
// full decode (what github.com/cilium/ebpf/btf does to build its Type graph)
// is the cost to avoid. Parse makes one linear pass over the type section to
// record where every type starts; names, the essential-name index and type
// bodies are read on demand through the cheap Type view. Encoder writes
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

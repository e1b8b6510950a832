// Package libbpftest lets libbpf judge minimized BTF, as the tests of
// coremin let cilium/ebpf judge it: `btfembed min` is a drop-in for
// `bpftool gen min_core_btf`, whose users load with libbpf, so libbpf's
// CO-RE decisions must not change either when the full kernel BTF is
// replaced by the minimized one.
//
// Build compiles loader/loader.c, a small program against the system's libbpf
// (Debian: libbpf-dev; libbpf 1.1 there), with the system C compiler.
// Loader.Decide opens an object with btf_custom_path set to a target BTF,
// loads it, and reads libbpf's debug log into one decision per CO-RE
// relocation: the patched instruction and its old and new value, a
// poisoned instruction, or the error that stopped relocation. A
// target_type_id decision names the type (kind and name) rather than its
// ID, which minimization renumbers. Diff lists where two runs disagree.
//
// Loading needs bpf() (root or CAP_BPF); Build skips the test, saying
// why, where the compiler, libbpf or bpf() is missing.
package libbpftest

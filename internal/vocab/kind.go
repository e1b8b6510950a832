package vocab

import "slices"

// Kind says what a reason is about. The report's JSON and the embedded
// verdicts carry it as these strings, which docs/predictions.md lists.
type Kind string

const (
	// KindCORE: a CO-RE relocation that does not resolve on the kernel,
	// a poisoned instruction the verifier reaches or a relocation
	// cilium/ebpf refuses.
	KindCORE Kind = "core"
	// KindHelper: a helper the kernel's enum bpf_func_id lacks, a helper
	// returning a pointer typed by kernel BTF on a kernel without its own
	// BTF, or a callback (BPF_PSEUDO_FUNC) on a kernel before them.
	KindHelper Kind = "helper"
	// KindMapType: a map type the kernel's enum bpf_map_type lacks.
	KindMapType Kind = "map_type"
	// KindProgType: a program type the kernel's enum bpf_prog_type lacks.
	KindProgType Kind = "prog_type"
	// KindAttachType: an expected attach type the kernel's enum
	// bpf_attach_type lacks.
	KindAttachType Kind = "attach_type"
	// KindKfunc: a kfunc the kernel's BTF has no FUNC for.
	KindKfunc Kind = "kfunc"
	// KindGlobalData: global data (.rodata, .data, .bss, .kconfig) on a
	// kernel before 5.2.
	KindGlobalData Kind = "global_data"
	// KindBTFIDAttach: a program type that attaches by kernel BTF ID
	// (fentry, fexit, fmod_ret, tp_btf, iter, lsm, struct_ops) or a
	// kfunc call, on a kernel without its own BTF.
	KindBTFIDAttach Kind = "btf_id_attach"
	// KindCtxAccess: a load cilium/ebpf's fixups leave at an offset a
	// 32-bit kernel's verifier refuses for its size.
	KindCtxAccess Kind = "ctx_access"
	// KindCall: a bpf-to-bpf call or callback (BPF_PSEUDO_CALL,
	// BPF_PSEUDO_FUNC) on a kernel before 4.16, which has neither.
	KindCall Kind = "bpf_call"
	// KindJIT: a callback or bpf-to-bpf call that the kernel's JIT
	// cannot compile and its interpreter refuses or lacks (x86-32).
	KindJIT Kind = "jit"
	// KindAnalysis: the analysis itself cannot decide (the walk gave up,
	// a value set at load time, the kernel's version unknown).
	KindAnalysis Kind = "analysis"
)

// kinds are the constants above, in docs/predictions.md's order: Go
// cannot list a type's constants.
var kinds = []Kind{
	KindCORE, KindHelper, KindMapType, KindProgType, KindAttachType, KindKfunc,
	KindGlobalData, KindCall, KindBTFIDAttach, KindCtxAccess, KindJIT, KindAnalysis,
}

// Valid reports whether k is one of the kinds above. Readers of report
// parts and payloads refuse any other word: the runtime hands Kind to
// agents as a stable word to switch on and log, so one from a crafted
// input ("explodes", an escape sequence) must not reach them.
func (k Kind) Valid() bool { return slices.Contains(kinds, k) }

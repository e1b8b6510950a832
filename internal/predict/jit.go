package predict

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/vocab"
)

// The verifier hands a program with bpf-to-bpf calls or callbacks to the
// architecture's JIT, one image per function (kernel/bpf/verifier.c,
// fixup_call_args calling jit_subprogs). Where the JIT cannot compile a
// call (x86-32: arch/x86/net/bpf_jit_comp32.c's do_jit gives up on a
// BPF_PSEUDO_CALL), jit_subprogs fails with ENOTSUPP, and:
//
//   - a kernel built with CONFIG_BPF_JIT_ALWAYS_ON has no interpreter and
//     returns that error: every program with a call or a callback fails;
//   - otherwise fixup_call_args falls back to the interpreter, which runs
//     bpf-to-bpf calls (bpf_patch_call_args) but refuses callbacks
//     ("callbacks are not allowed in non-JITed programs", Linux 5.13 on,
//     the first with callbacks) and tail calls reachable from a
//     subprogram ("tail_calls are not allowed in non-JITed programs with
//     bpf-to-bpf calls").
//
// With the JIT switched off (sysctl net.core.bpf_jit_enable=0, possible
// only without CONFIG_BPF_JIT_ALWAYS_ON) the interpreter does the same on
// every architecture; the prediction takes the kernel's default, the JIT
// on (CONFIG_BPF_JIT_DEFAULT_ON, which x86_64 and arm64 select), and
// lists the sysctl as outside the model (docs/predictions.md).

// jitArch names the kernel's architecture as BTFHub does (x86_64, i386,
// arm64, arm), from the members of its struct pt_regs and the size of its
// long; "" if neither tells.
func jitArch(vmlinux *btf.Spec, longSize uint32) string {
	var regs *btf.Struct
	if err := vmlinux.TypeByName("pt_regs", &regs); err != nil {
		return ""
	}
	has := func(name string) bool {
		return slices.ContainsFunc(regs.Members, func(m btf.Member) bool { return m.Name == name })
	}
	switch {
	case has("r15") && longSize == 8:
		return "x86_64"
	case has("bx") && longSize == 4:
		return "i386"
	case has("orig_x0") && longSize == 8:
		return "arm64"
	case has("uregs") && longSize == 4:
		return "arm"
	}
	return ""
}

// hasInterpreter says whether the kernel was built with BPF's
// interpreter, that is without CONFIG_BPF_JIT_ALWAYS_ON: only then does
// kernel/bpf/core.c build bpf_patch_call_args, which the verifier calls
// to run bpf-to-bpf calls interpreted.
func hasInterpreter(vmlinux *btf.Spec) bool { return hasFunc(vmlinux, "bpf_patch_call_args") }

// jitWithoutCalls says, for each 32-bit architecture whose JIT does not
// compile bpf-to-bpf calls, why: the interpreter runs them instead, where
// the kernel has one. On arm the JIT is off by default
// (CONFIG_BPF_JIT_DEFAULT_ON is not selected there), and switched on it
// falls back the same way: Debian's armhf 5.10 and 6.1 kernels, booted
// both ways, load plain calls and refuse callbacks, as i386 does.
var jitWithoutCalls = map[string]string{
	"i386": "the x86-32 JIT does not compile bpf-to-bpf calls",
	"arm":  "the 32-bit arm JIT does not compile bpf-to-bpf calls (and is off by default)",
}

// checkCalls checks a program's bpf-to-bpf calls and callbacks against
// the kernel's JIT. The verifier refuses them after its walk, reached or
// not, so the reasons go to b.after.
func (b *beyond) checkCalls(insns asm.Instructions, k *Kernel) {
	if !k.is32Bit() {
		return // the 64-bit JITs compile calls and callbacks
	}
	callback, call, tailCall := -1, -1, false
	for pc := range insns {
		ins := &insns[pc]
		switch {
		case ins.IsLoadOfFunctionPointer() && callback < 0:
			callback = pc
		case ins.IsFunctionCall() && call < 0:
			call = pc
		case ins.IsBuiltinCall() && ins.Constant == int64(asm.FnTailCall):
			tailCall = true
		}
	}
	if callback < 0 && call < 0 {
		return
	}
	what := fmt.Sprintf("a bpf-to-bpf call at insn %d", call)
	if callback >= 0 {
		what = fmt.Sprintf("callback %s at insn %d", insns[callback].Reference(), callback)
	}
	jit, ok := jitWithoutCalls[k.Arch]
	if !ok {
		b.unknown = append(b.unknown, Reason{vocab.KindJIT, fmt.Sprintf(
			"%s: whether this 32-bit kernel's JIT (arch %q) compiles bpf-to-bpf calls is not modeled", what, k.Arch)})
		return
	}
	switch {
	case !k.Interpreter:
		b.after = append(b.after, Reason{vocab.KindJIT, fmt.Sprintf(
			"%s: %s, and this kernel has no interpreter to fall back on (CONFIG_BPF_JIT_ALWAYS_ON; the load fails with ENOTSUPP)", what, jit)})
	case callback >= 0:
		b.after = append(b.after, Reason{vocab.KindJIT, fmt.Sprintf(
			"%s: %s, and the interpreter refuses callbacks (callbacks are not allowed in non-JITed programs)", what, jit)})
	case tailCall:
		b.unknown = append(b.unknown, Reason{vocab.KindJIT, fmt.Sprintf(
			"%s with a tail call: %s, and the interpreter refuses a tail call reachable from a subprogram (tail_calls are not allowed in non-JITed programs with bpf-to-bpf calls), which is not modeled", what, jit)})
	}
}

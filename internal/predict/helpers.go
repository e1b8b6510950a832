package predict

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/cilium/ebpf/asm"
)

// helperName is the kernel's name of helper id, bpf_ and the enumerator
// of enum bpf_func_id without BPF_FUNC_ ("bpf_ringbuf_output"), derived
// from cilium/ebpf's constant (asm.FnRingbufOutput): a kernel that lacks
// a helper cannot name it. TestHelperNames checks the derivation against
// the enum bpf_func_id of corpus kernels.
func helperName(id uint32) string {
	name := asm.BuiltinFunc(id).String()
	if !strings.HasPrefix(name, "Fn") {
		return fmt.Sprintf("helper#%d", id)
	}
	var b strings.Builder
	b.WriteString("bpf")
	for _, r := range name[2:] {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// btfPointerHelpers return a pointer typed by the kernel's own BTF
// (RET_PTR_TO_BTF_ID, RET_PTR_TO_BTF_ID_OR_NULL): the verifier needs the
// kernel's BTF ID of the type and, on a kernel built without BTF, refuses
// the call ("invalid return type 8 of func bpf_get_current_task_btf").
// BTF cannot tell which helpers do so (the prototypes, struct
// bpf_func_proto, are data): the list is the helpers whose ret_type is
// one of those in kernel/bpf/helpers.c, kernel/trace/bpf_trace.c and
// net/core/filter.c of Linux 6.12.
var btfPointerHelpers = map[asm.BuiltinFunc]bool{
	asm.FnSkcToTcp6Sock:        true,
	asm.FnSkcToTcpSock:         true,
	asm.FnSkcToTcpTimewaitSock: true,
	asm.FnSkcToTcpRequestSock:  true,
	asm.FnSkcToUdp6Sock:        true,
	asm.FnGetCurrentTaskBtf:    true,
	asm.FnSockFromFile:         true,
	asm.FnTaskPtRegs:           true,
	asm.FnSkcToUnixSock:        true,
	asm.FnSkcToMptcpSock:       true,
}

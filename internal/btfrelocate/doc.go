// Package btfrelocate relocates split BTF written over a distilled base
// onto another base BTF, the semantics of libbpf's btf__relocate. It lies
// below its users: package distill, whose Relocate is the public API and
// the 'btfembed relocate' command, internal/btfdistill, which distills over
// its Base, and package runtime/modules, which relocates embedded module
// BTF onto the selected vmlinux BTF inside the agents whose payload has
// module BTF (internal/modulehook) and so must not link the distillation
// code (internal/btfdistill).
package btfrelocate

import "errors"

// ErrNotSplit is wrapped by the errors for BTF that is not split BTF.
var ErrNotSplit = errors.New("not split BTF")

// MaxChain bounds walks along typedef, qualifier and array chains, which
// only malformed BTF makes long or circular (cilium/ebpf stops at 32 too).
const MaxChain = 32

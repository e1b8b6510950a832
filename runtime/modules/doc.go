// Package modules links the relocation of module BTF into an agent. The
// code btfembed generates imports it for its side effect,
//
//	import _ "github.com/btfembed/btfembed/runtime/modules"
//
// exactly when its payload embeds BTF of kernel modules. The runtime
// relocates such BTF, written over a distilled base (.BTF.base), onto the
// vmlinux BTF it selects, the semantics of libbpf's btf__relocate. That
// code is about 70 KB of an agent, which an agent whose payload has no
// module BTF (most of them) does not link. runtime.Open refuses a payload
// with module BTF when this package is not linked, with an error that says
// to run go generate, rather than serving the agent without its modules.
//
// It exports nothing.
package modules

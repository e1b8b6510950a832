package modulehook

import "github.com/btfembed/btfembed/internal/rawbtf"

// Relocate rewrites split, a module's split BTF over distilledBase, into
// split BTF over vmlinux, with the semantics of libbpf's btf__relocate.
// It is nil until package runtime/modules is initialized, which sets it
// and nothing else does; it is read only after package initialization.
var Relocate func(split, distilledBase []byte, vmlinux *rawbtf.Spec) ([]byte, error)

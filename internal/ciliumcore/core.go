package ciliumcore

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// Relocate computes the fixups of relos, relocations of prog, against
// targets (vmlinux first, then modules) with one btf.CORERelocate call,
// in prog's byte order or the host's if it has none, as cilium/ebpf's
// loader does.
func Relocate(prog *ebpf.ProgramSpec, relos []*btf.CORERelocation, targets []*btf.Spec) ([]btf.COREFixup, error) {
	bo := prog.ByteOrder
	if bo == nil {
		bo = binary.NativeEndian
	}
	// The builder receives the local types of target_type_id
	// relocations; only the fixups matter here.
	var b btf.Builder
	return btf.CORERelocate(relos, targets, bo, b.Add)
}

// DescribeTypeID names type id, given in decimal, of spec by its Go type
// in cilium/ebpf and its name (`*btf.Struct "task_struct"`), or says why
// it cannot.
func DescribeTypeID(spec *btf.Spec, id string) string {
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return "bad id " + id
	}
	t, err := spec.TypeByID(btf.TypeID(n))
	if err != nil {
		return fmt.Sprintf("id %d: %v", n, err)
	}
	return fmt.Sprintf("%T %q", t, t.TypeName())
}

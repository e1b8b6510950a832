// Package ciliumcore runs cilium/ebpf's CO-RE relocation of a program as
// its loader does (linker.go, applyRelocations), for the code that takes
// cilium/ebpf as the reference: coremin's oracle, which compares its
// fixups against full and minimized BTF, and predict, which applies them
// before judging a program. It also names a target type ID by kind and
// name, as those and the libbpf tests compare target_type_id fixups:
// minimizing renumbers types.
package ciliumcore

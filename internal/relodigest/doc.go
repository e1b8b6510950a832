// Package relodigest digests the CO-RE relocations of a BPF collection's
// programs, the same way on both sides of btfembed. The generator records
// in the payload the digest of every program of the objects it minimized
// BTF for; the runtime digests the collection an agent hands it and
// refuses one whose programs the payload does not record with those
// digests. So an object rebuilt with other relocations while the payload
// was not generated again (embedded BTF that drifted from its objects, a
// known way agents break) is an error at start-up that says to run go
// generate, not wrong fixups or a load failure on some kernel in the field.
//
// A program's digest covers what decides its fixups on any kernel: for
// each relocation, its kind, its access string and the shape of its local
// type (the type as BTF on its own, TypeShape), as a multiset, since the
// order of instructions decides nothing. It leaves out the instructions,
// type IDs and anything else a rebuild changes without changing a fixup.
//
// Both sides read the relocations from cilium/ebpf's CollectionSpec
// (btf.CORERelocationMetadata on each instruction), the generator from
// the objects it loads and the runtime from the agent's spec, with the
// cilium/ebpf the agent's module builds both with (go tool btfembed runs
// in the agent's module).
package relodigest

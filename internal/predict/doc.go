// Package predict tells, for each program of a BPF object and each kernel,
// whether cilium/ebpf's loader will get the program past the verifier as
// far as CO-RE is concerned: whether a poisoned instruction can be
// reached.
//
// cilium/ebpf (btf/core.go, COREFixup.Apply) replaces the instruction of
// a relocation that cannot be satisfied on the target kernel with one
// the verifier rejects when it reaches it: a call to the invalid helper
// 0xbad2310, or, for a 64-bit immediate load, `r10 = 0xbad2310` (a write
// to the read-only frame pointer). libbpf does the same with its own
// encoding. The verifier only rejects instructions it reaches, and it
// does not follow a conditional jump whose outcome it knows from
// constants: this is what makes a CO-RE guard work,
//
//	if (bpf_core_field_exists(t->mm_cid))   // r1 = 0 or 1, relocated
//		v = BPF_CORE_READ(t, mm_cid);       // poisoned where r1 = 0
//
// compiles to a relocated `r1 = 1` tested by `if r1 == 0 goto`, and the
// fixup makes the constant 0 on a kernel without the member.
//
// The prediction applies the fixups that cilium/ebpf computes for the
// kernel's BTF, then walks the program the way the verifier explores it:
// registers and stack slots holding constants are tracked through moves,
// ALU operations, spills and fills, bpf-to-bpf calls and returns; a
// conditional jump on known values goes one way only; pointers to the
// stack are told apart from unknown scalars. A poisoned instruction that
// the walk reaches makes the program fail; one it never reaches is a
// guarded miss.
//
// Where the verifier may know more than the walk (a value read from a
// frozen .rodata map, which the user may set at load time, or a value the
// walk stopped tracking), the walk still explores both ways, but a poison
// reached only that way gives the verdict Unknown, naming the branch. The
// walk does not track ranges: a jump that only the verifier's range
// tracking decides (rare in compiled code) is explored both ways.
//
// Beyond CO-RE, with Options.Kernel (NewKernel: facts read from the
// kernel's full BTF), the verdict also covers what the kernel lacks: a
// helper not in its enum bpf_func_id, a map, program or attach type not
// in enum bpf_map_type, bpf_prog_type or bpf_attach_type, a kfunc its BTF
// has no FUNC for, its own BTF (for programs attaching by BTF ID, kfunc
// calls and helpers returning BTF pointers), global data and bpf-to-bpf
// calls it predates, calls its 32-bit JIT does not compile, and an 8-byte
// context load a 32-bit kernel refuses. Calls to helpers and
// kfuncs count only where reached, like poisons: a CO-RE guard such as
// bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_x) keeps a
// missing helper's call from failing the program. Each reason has a
// stable kind ("core", "helper", "map_type"...) and each prediction a
// verdict: internal/vocab holds both, so that the report, the payload and
// the runtime share the words without linking this package.
//
// What stays outside the model (docs/predictions.md lists it next to
// what Loads promises): the verifier's limits and complexity, context
// access rules beyond the 32-bit case, which helpers and kfuncs each
// program type may call, the kernel's configuration, value types and
// reference tracking, and loader-time conditions such as RLIMIT_MEMLOCK.
//
// The CO-RE relocations' kinds, local types and accesses come from
// coremin's parse of the object's .BTF.ext (Collection takes it),
// matched to cilium/ebpf's relocated instructions function by function:
// cilium/ebpf keeps them unexported.
//
// The verifier has learnt over the years, and the walk follows what the
// kernel's types show it has (features.go: a member or enum value the
// feature's commit added), never its release where they decide, since
// vendors backport BPF under old releases; the release (Options.Release,
// model.go) counts only where no type decides, and then can only make a
// verdict Unknown. Upstream, before 5.0 the verifier decides
// only JEQ and JNE against an immediate, before 5.7 only comparisons
// against immediates; before 5.17 a fill narrower than 8 bytes forgets
// a spilled constant. Global functions are verified on their own, with
// unknown arguments and an unknown return value, from 5.6; from 6.8 only
// where a call to them is reached.
package predict

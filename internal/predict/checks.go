package predict

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/btfembed/btfembed/internal/vocab"
)

// point is an instruction that fails the program where the verifier
// reaches it: a poisoned CO-RE relocation, a call to a helper the kernel
// lacks, a load it refuses.
type point struct {
	kind vocab.Kind
	// what names the problem: "byte_off task_struct.mm_cid" for a CO-RE
	// poison, "helper bpf_loop (181) is not in this kernel" otherwise.
	what string
	// op is what the instruction does, for the reason ("call").
	op string
	// maybe: reaching it makes the verdict Unknown, not Fails (the
	// kernel may accept it: the model cannot tell).
	maybe bool
	// unreached, if set, is why the program may fail even where the
	// instruction is not reached.
	unreached string
}

// beyond is what the prediction sees beyond CO-RE in one program on one
// kernel: reasons that hold whatever the verifier reaches (the kernel
// refuses the program, its maps or an instruction before walking it, or
// after), and the instructions that fail the program where reached.
type beyond struct {
	fails, unknown []Reason
	// after fail the program whatever is reached, but only once the
	// verifier has walked it (fixup_call_args): they come after what
	// the walk finds.
	after  []Reason
	points map[int]point
	weak   map[string]bool // kfuncs whose address the program tests
}

// checkBeyond checks a relocated program (insns) against the kernel's
// facts. maps and vars are the object's maps and global variables
// (CollectionSpec.Maps, .Variables); byteOff marks the instructions a
// byte_off relocation fixed up (relocated.byteOff).
func checkBeyond(prog *ebpf.ProgramSpec, maps map[string]*ebpf.MapSpec, vars map[string]*ebpf.VariableSpec, insns asm.Instructions, byteOff []bool, k *Kernel, release string) beyond {
	var b beyond
	b.points = map[int]point{}
	b.weak = kfuncAddresses(insns, k)
	b.checkCallsExist(insns, k, release) // cilium/ebpf refuses before the kernel sees the program
	b.checkTypes(prog, k)

	globalData := -1
	mapSeen := map[string]bool{}
	for pc := range insns {
		ins := &insns[pc]
		switch {
		case ins.IsLoadFromMap():
			if ins.Src == asm.PseudoMapValue && globalData < 0 {
				globalData = pc
			}
			name := ins.Reference()
			if ms := maps[name]; ms != nil && !mapSeen[name] {
				mapSeen[name] = true
				b.checkMap(name, ms, k)
			}
		case ins.IsLoadOfFunctionPointer():
			// BPF_PSEUDO_FUNC came with bpf_for_each_map_elem (Linux
			// 5.13, commit 69c087ba6225): the kernel's enum bpf_func_id
			// tells whether it knows them.
			if k.FuncIDs != nil && !has(k.FuncIDs, uint32(asm.FnForEachMapElem)) && !b.hasFails(vocab.KindHelper, "callback") {
				b.fails = append(b.fails, Reason{vocab.KindHelper, fmt.Sprintf(
					"callback %s at insn %d: the kernel predates callbacks (BPF_PSEUDO_FUNC; its enum bpf_func_id has no %s)",
					ins.Reference(), pc, helperName(uint32(asm.FnForEachMapElem)))})
			}
		case ins.IsBuiltinCall() && ins.Constant >= 0 && ins.Constant != poisonConstant:
			b.checkHelper(pc, uint32(ins.Constant), k)
		case ins.IsKfuncCall():
			b.checkKfunc(pc, ins.Reference(), k)
		case k.is32Bit() && pc < len(byteOff) && byteOff[pc] && ins.OpCode.Class() == asm.LdXClass &&
			ins.OpCode.Size() == asm.DWord && ins.Offset%8 != 0:
			b.points[pc] = point{
				kind: vocab.KindCtxAccess,
				what: fmt.Sprintf("an 8-byte load at offset %d (cilium/ebpf moves a CO-RE field's offset, not its load's size), which a 32-bit kernel refuses from a context (invalid bpf_context access off=%d size=8)", ins.Offset, ins.Offset),
				op:   "load",
				// Only these program types' direct loads with
				// relocated offsets are context loads; elsewhere the
				// base may be a BTF pointer or a map value.
				maybe: !slices.Contains([]ebpf.ProgramType{ebpf.Kprobe, ebpf.TracePoint, ebpf.PerfEvent, ebpf.RawTracepoint, ebpf.RawTracepointWritable}, prog.Type),
			}
		}
	}
	switch ro := readOnlyData(maps, vars); {
	case globalData >= 0:
		b.checkGlobalData(fmt.Sprintf("global data at insn %d", globalData), "the verifier says unrecognized bpf_ld_imm64 insn", FeatureGlobalData, k, release, false)
	case ro != "":
		b.checkGlobalData("the object's read-only global data "+ro,
			"the kernel refuses BPF_F_RDONLY_PROG, which cilium/ebpf gives it when it creates it along with the program, read or not, whenever it loads the object's variables (bpf2go's LoadAndAssign)", FeatureReadOnlyMaps, k, release, true)
	}
	b.checkCalls(insns, k)
	return b
}

// pseudoBTFID is BPF_PSEUDO_BTF_ID, the source register of a 64-bit load
// of a kernel symbol's address, which cilium/ebpf writes for a kfunc the
// kernel has (asm has no name for it).
const pseudoBTFID = asm.Register(3)

// kfuncAddresses finds the 64-bit loads of a kfunc's address, which is
// how bpf_ksym_exists tests a __weak kfunc: cilium/ebpf leaves 0 where
// the kernel lacks the kfunc, and writes its address where it has it, a
// value the walk must not take for the constant 0 the ELF holds. It
// marks those loads so, and returns the kfuncs they name: declared
// __weak (cilium/ebpf refuses a missing kfunc otherwise).
func kfuncAddresses(insns asm.Instructions, k *Kernel) map[string]bool {
	weak := map[string]bool{}
	for i := range insns {
		ins := &insns[i]
		if !ins.OpCode.IsDWordLoad() || ins.Src != asm.R0 || ins.Reference() == "" || !slices.Contains(k.Asked, ins.Reference()) {
			continue
		}
		weak[ins.Reference()] = true
		if slices.Contains(k.Kfuncs, ins.Reference()) {
			ins.Src = pseudoBTFID
		}
	}
	return weak
}

// poisonConstant is the helper number of the call cilium/ebpf writes in
// place of a CO-RE relocation it cannot satisfy (btf.COREBadRelocationSentinel).
const poisonConstant = 0xbad2310

func (b *beyond) hasFails(kind vocab.Kind, prefix string) bool {
	return slices.ContainsFunc(b.fails, func(r Reason) bool {
		return r.Kind == kind && len(r.Text) >= len(prefix) && r.Text[:len(prefix)] == prefix
	})
}

// checkTypes checks the program's type and expected attach type against
// the kernel's enums, and BTF-ID attach types against its own BTF.
func (b *beyond) checkTypes(prog *ebpf.ProgramSpec, k *Kernel) {
	switch {
	case k.ProgTypes == nil:
		b.unknown = append(b.unknown, Reason{vocab.KindProgType, "the kernel's BTF has no enum bpf_prog_type"})
	case !has(k.ProgTypes, uint32(prog.Type)):
		b.fails = append(b.fails, Reason{vocab.KindProgType, fmt.Sprintf("program type %s (%d) is not in this kernel", prog.Type, uint32(prog.Type))})
	}
	if prog.AttachType != ebpf.AttachNone && loadChecksAttachType(prog.Type) {
		switch {
		case k.AttachTypes == nil:
			b.unknown = append(b.unknown, Reason{vocab.KindAttachType, "the kernel's BTF has no enum bpf_attach_type"})
		case !has(k.AttachTypes, uint32(prog.AttachType)):
			b.fails = append(b.fails, Reason{vocab.KindAttachType, fmt.Sprintf("attach type %s (%d) is not in this kernel", prog.AttachType, uint32(prog.AttachType))})
		}
	}
	// These attach to a kernel function, tracepoint, hook or struct by
	// its ID in the kernel's own BTF (BPF_PROG_LOAD's attach_btf_id).
	// freplace (Extension) attaches to another BPF program's BTF and
	// needs none.
	switch prog.Type {
	case ebpf.Tracing, ebpf.LSM, ebpf.StructOps:
		if !k.OwnBTF {
			b.fails = append(b.fails, Reason{vocab.KindBTFIDAttach, fmt.Sprintf("program type %s attaches by kernel BTF ID (%s), and this kernel has no BTF of its own", prog.Type, prog.SectionName)})
		}
	}
}

// loadChecksAttachType reports whether BPF_PROG_LOAD refuses an expected
// attach type it does not know for programs of type t. The kernel checks
// it at load time only for these types (kernel/bpf/syscall.c,
// bpf_prog_load_check_attach, and the BTF-ID types' checks in the
// verifier's check_attach_btf_id); every other type ignores it until the
// program is attached. A kprobe.multi program (BPF_TRACE_KPROBE_MULTI,
// 5.18) loads on 5.10 and fails only at link creation, which is outside
// what `loads` promises.
func loadChecksAttachType(t ebpf.ProgramType) bool {
	switch t {
	case ebpf.CGroupSock, ebpf.CGroupSockAddr, ebpf.CGroupSKB, ebpf.CGroupSockopt,
		ebpf.SkLookup, ebpf.SkReuseport, ebpf.Netfilter,
		ebpf.Tracing, ebpf.LSM, ebpf.Extension:
		return true
	}
	return false
}

// checkMap checks a map the program refers to, and its inner map.
func (b *beyond) checkMap(name string, ms *ebpf.MapSpec, k *Kernel) {
	for ms != nil {
		switch {
		case k.MapTypes == nil:
			b.unknown = append(b.unknown, Reason{vocab.KindMapType, "the kernel's BTF has no enum bpf_map_type"})
			return
		case !has(k.MapTypes, uint32(ms.Type)):
			b.fails = append(b.fails, Reason{vocab.KindMapType, fmt.Sprintf("map %s: map type %s (%d) is not in this kernel", name, ms.Type, uint32(ms.Type))})
		}
		ms, name = ms.InnerMap, name+" (inner map)"
	}
}

// checkHelper checks a helper call at pc.
func (b *beyond) checkHelper(pc int, id uint32, k *Kernel) {
	switch {
	case k.FuncIDs == nil:
		if !slices.ContainsFunc(b.unknown, func(r Reason) bool { return r.Kind == vocab.KindHelper }) {
			b.unknown = append(b.unknown, Reason{vocab.KindHelper, "the kernel's BTF has no enum bpf_func_id"})
		}
	case !has(k.FuncIDs, id):
		b.points[pc] = point{kind: vocab.KindHelper, what: fmt.Sprintf("helper %s (%d) is not in this kernel", helperName(id), id), op: "call"}
	case btfPointerHelpers[asm.BuiltinFunc(id)] && !k.OwnBTF:
		b.points[pc] = point{kind: vocab.KindHelper, what: fmt.Sprintf("helper %s (%d) returns a pointer typed by the kernel's own BTF, and this kernel has none (invalid return type)", helperName(id), id), op: "call"}
	}
}

// checkKfunc checks a kfunc call at pc. cilium/ebpf refuses a program
// calling a kfunc the kernel lacks, reached or not, unless the kfunc is
// declared __weak (then it poisons the call). The binding is not visible
// here (cilium/ebpf keeps it unexported): an unreached call gives
// Unknown, unless the program tests the kfunc's address, which only a
// weak kfunc can have 0.
func (b *beyond) checkKfunc(pc int, name string, k *Kernel) {
	switch {
	case !k.OwnBTF:
		b.fails = append(b.fails, Reason{vocab.KindBTFIDAttach, fmt.Sprintf("kfunc %s at insn %d is called by kernel BTF ID, and this kernel has no BTF of its own", name, pc)})
	case !slices.Contains(k.Asked, name):
		b.unknown = append(b.unknown, Reason{vocab.KindKfunc, fmt.Sprintf("kfunc %s at insn %d: the kernel's facts do not say whether it has it", name, pc)})
	case !slices.Contains(k.Kfuncs, name):
		pt := point{kind: vocab.KindKfunc, what: fmt.Sprintf("kfunc %s is not in this kernel's BTF", name), op: "call"}
		if !b.weak[name] {
			pt.unreached = fmt.Sprintf("kfunc %s is not in this kernel's BTF: cilium/ebpf refuses the program unless %s is declared __weak", name, name)
		}
		b.points[pc] = pt
	}
}

// checkGlobalData: global data (.rodata, .data, .bss, .kconfig) needs
// direct access to map values (FeatureGlobalData), and cilium/ebpf gives
// .rodata and .kconfig the read-only flag BPF_F_RDONLY_PROG
// (FeatureReadOnlyMaps): both Linux 5.2, both read from the kernel's
// types. what is the global data, why what the kernel does without f.
// atMapCreation says the kernel refuses it when cilium/ebpf creates the
// object's maps, before anything else of the program: the reason goes
// first. Where the types do not decide, the release can only make the
// verdict Unknown.
func (b *beyond) checkGlobalData(what, why string, f Feature, k *Kernel, release string, atMapCreation bool) {
	b.need(vocab.KindGlobalData, what, why, feature(k, release, f), atMapCreation)
}

// need records what the kernel's lack of a feature does to the program:
// nothing where it has it, Unknown where only its release says it lacks
// it, Fails (first, with first) where its types do. why is what happens
// without the feature.
func (b *beyond) need(kind vocab.Kind, what, why string, ff featureFact, first bool) {
	switch {
	case ff.has:
	case ff.by == nil:
		b.unknown = append(b.unknown, Reason{kind, fmt.Sprintf("%s needs %s", what, ff)})
	case first:
		b.fails = append([]Reason{{kind, fmt.Sprintf("%s needs %s; without it %s", what, ff, why)}}, b.fails...)
	default:
		b.fails = append(b.fails, Reason{kind, fmt.Sprintf("%s needs %s; without it %s", what, ff, why)})
	}
}

// checkCallsExist: bpf-to-bpf calls came with Linux 4.16
// (FeatureCalls). Without them cilium/ebpf refuses a program that refers
// to another function, by a call or by a callback's address ("bpf2bpf
// calls not supported (requires >= v4.16)", its probe of the kernel),
// before the verifier sees it. Where the types do not decide, the
// release can only make the verdict Unknown.
func (b *beyond) checkCallsExist(insns asm.Instructions, k *Kernel, release string) {
	pc := slices.IndexFunc(insns, func(ins asm.Instruction) bool {
		return ins.IsFunctionCall() || ins.IsLoadOfFunctionPointer()
	})
	if pc < 0 {
		return
	}
	what := fmt.Sprintf("the bpf-to-bpf call at insn %d", pc)
	if insns[pc].IsLoadOfFunctionPointer() {
		what = fmt.Sprintf("the callback at insn %d, a bpf-to-bpf reference,", pc)
	}
	b.need(vocab.KindCall, what, "cilium/ebpf says bpf2bpf calls not supported", feature(k, release, FeatureCalls), false)
}

// bpfFRdonlyProg is BPF_F_RDONLY_PROG, the map flag cilium/ebpf's ELF
// reader sets on read-only global data (.rodata*, .kconfig).
const bpfFRdonlyProg = 1 << 7

// readOnlyData is the first, by name, of the object's maps that hold
// read-only global variables, or "". A program that does not read them
// still fails with them before 5.2 where it is loaded with its
// object's variables, as bpf2go's objects and runtime's Prune load it:
// cilium/ebpf creates every map that holds a variable, and the kernel
// refuses BPF_F_RDONLY_PROG at map creation. Writable global data
// (.data, .bss) is created as a plain array there and fails only the
// programs that read it; string literals (.rodata.str1.1) hold no
// variable and are created only for the programs that read them.
func readOnlyData(objMaps map[string]*ebpf.MapSpec, vars map[string]*ebpf.VariableSpec) string {
	var names []string
	for _, v := range vars {
		if ms := objMaps[v.SectionName]; ms != nil && ms.Flags&bpfFRdonlyProg != 0 {
			names = append(names, v.SectionName)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return slices.Min(names)
}

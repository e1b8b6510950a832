package predict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// maxSteps bounds the instructions the walk executes for one program,
// like the verifier's limit of one million processed instructions.
const maxSteps = 1 << 20

// globals says when the verifier checks a global function.
type globals uint8

const (
	globalsLazy   globals = iota // where a call to it is reached (Linux 6.8+)
	globalsEager                 // always (5.6 to 6.7)
	globalsUnsure                // the kernel's version is not known
	globalsStatic                // not on its own: followed like a static function (before 5.6)
)

// walker explores one relocated program.
type walker struct {
	insns  asm.Instructions
	poison map[int]point
	model  model

	offsets []int // raw offset of each instruction, increasing
	symbols map[string]int

	steps int
	// hits maps each poisoned instruction reached to the best why of the
	// paths reaching it (-1: a path the verifier surely takes).
	hits map[int]int
	// why holds the reasons paths are undecided.
	why    []string
	whyAt  map[int]int // jump instruction to its index in why
	giveUp []string

	entries map[int]int // function start to the best why it is reached with
	queue   []int
}

func newWalker(insns asm.Instructions, poison map[int]point, m model) *walker {
	w := &walker{
		insns: insns, poison: poison, model: m,
		symbols: map[string]int{},
		hits:    map[int]int{},
		whyAt:   map[int]int{},
		entries: map[int]int{},
	}
	raw := 0
	w.offsets = make([]int, 0, len(insns))
	for i := range insns {
		w.offsets = append(w.offsets, raw)
		if sym := insns[i].Symbol(); sym != "" {
			w.symbols[sym] = i
		}
		raw += int(insns[i].Width())
	}
	return w
}

// at is the index of the instruction at raw offset raw, if one starts
// there: a binary search, since a map built per program and kernel cost
// more than the walk.
func (w *walker) at(raw int) (int, bool) {
	return slices.BinarySearch(w.offsets, raw)
}

// run walks the program from its entry and from every function the
// verifier checks on its own.
func (w *walker) run() {
	w.enqueue(0, -1)
	if g := w.model.globals; g == globalsEager || g == globalsUnsure {
		for i := 1; i < len(w.insns); i++ {
			if w.isGlobal(i) {
				why := -1
				if g == globalsUnsure {
					why = w.reason(-1-i, fmt.Sprintf("global function %s is verified on its own from Linux 5.6 to 6.7, where a call to it is reached from 6.8 on, and the kernel's types do not show which (%s; %s)", w.insns[i].Symbol(), w.model.globalsWhy[0], w.model.globalsWhy[1]))
				}
				w.enqueue(i, why)
			}
		}
	}
	for len(w.queue) > 0 && len(w.giveUp) == 0 {
		pc := w.queue[0]
		w.queue = w.queue[1:]
		w.walk(pc, w.entries[pc])
	}
}

// enqueue asks for a walk from function start pc with the given why,
// again if it was walked with a worse one.
func (w *walker) enqueue(pc, why int) {
	if old, ok := w.entries[pc]; ok && (old == -1 || why != -1) {
		return
	}
	w.entries[pc] = why
	w.queue = append(w.queue, pc)
}

func (w *walker) isGlobal(pc int) bool {
	if w.model.globals == globalsStatic {
		return false
	}
	fn := btf.FuncMetadata(&w.insns[pc])
	return fn != nil && fn.Linkage == btf.GlobalFunc
}

// reason records why a path is undecided, once per place.
func (w *walker) reason(at int, why string) int {
	if i, ok := w.whyAt[at]; ok {
		return i
	}
	w.why = append(w.why, why)
	w.whyAt[at] = len(w.why) - 1
	return len(w.why) - 1
}

func (w *walker) stop(pc int, format string, args ...any) {
	w.giveUp = append(w.giveUp, fmt.Sprintf("insn %d: ", pc)+fmt.Sprintf(format, args...))
}

// walk explores every path from function start pc, depth first, with
// the memo of states seen at conditional jumps.
func (w *walker) walk(pc, why int) {
	start := &state{pc: pc, why: why, frames: []frame{{ret: -1}}}
	seen := map[string]bool{}
	var key []byte
	paths := []*state{start}
	for len(paths) > 0 && len(w.giveUp) == 0 {
		s := paths[len(paths)-1]
		paths = paths[:len(paths)-1]
		for {
			if w.steps++; w.steps > maxSteps {
				w.stop(s.pc, "gave up after %d instructions", maxSteps)
				return
			}
			if s.pc < 0 || s.pc >= len(w.insns) {
				w.stop(s.pc, "jump out of the program")
				return
			}
			if _, ok := w.poison[s.pc]; ok {
				if old, ok := w.hits[s.pc]; !ok || (old != -1 && s.why == -1) {
					w.hits[s.pc] = s.why
				}
				break
			}
			if w.isCond(s.pc) {
				key = s.key(key[:0])
				if seen[string(key)] {
					break
				}
				seen[string(key)] = true
			}
			fork, ok := w.step(s)
			if fork != nil {
				paths = append(paths, fork)
			}
			if !ok {
				break
			}
		}
	}
}

func (w *walker) isCond(pc int) bool {
	op := w.insns[pc].OpCode
	if c := op.Class(); c != asm.JumpClass && c != asm.Jump32Class {
		return false
	}
	switch op.JumpOp() {
	case asm.Ja, asm.Call, asm.Exit:
		return false
	}
	return true
}

// step executes the instruction at s.pc, updating s to the next one. It
// returns a second path when a jump goes both ways, and false when the
// path ends.
func (w *walker) step(s *state) (*state, bool) {
	ins := &w.insns[s.pc]
	if ins.Dst > asm.R10 || ins.Src > asm.R10 {
		w.stop(s.pc, "no such register") // the verifier refuses it
		return nil, false
	}
	switch ins.OpCode.Class() {
	case asm.ALUClass, asm.ALU64Class:
		if ins.Dst == asm.R10 {
			w.stop(s.pc, "writes the frame pointer")
			return nil, false
		}
		s.top().regs[ins.Dst] = w.alu(s, ins)
	case asm.LdClass:
		if !ins.OpCode.IsDWordLoad() { // legacy packet access: a call in disguise
			s.top().clobber()
			s.top().regs[0] = value{}
			break
		}
		if ins.Dst == asm.R10 {
			w.stop(s.pc, "writes the frame pointer")
			return nil, false
		}
		s.top().regs[ins.Dst] = w.loadImm(s, ins)
	case asm.LdXClass:
		if ins.Dst == asm.R10 {
			w.stop(s.pc, "writes the frame pointer")
			return nil, false
		}
		s.top().regs[ins.Dst] = w.load(s, ins)
	case asm.StClass, asm.StXClass:
		w.store(s, ins)
	case asm.JumpClass, asm.Jump32Class:
		return w.jump(s, ins)
	default:
		w.stop(s.pc, "instruction class %s is not followed", ins.OpCode.Class())
		return nil, false
	}
	s.pc++
	return nil, true
}

// loadImm is a 64-bit immediate load: a constant, or the address of a
// map, a map value, a kernel symbol or a callback.
func (w *walker) loadImm(s *state, ins *asm.Instruction) value {
	switch {
	case ins.IsLoadOfFunctionPointer():
		target, ok := w.symbols[ins.Reference()]
		if !ok {
			w.stop(s.pc, "callback %q not found", ins.Reference())
			return value{}
		}
		// The verifier checks a callback where the helper taking it is
		// called, with arguments the helper decides.
		w.enqueue(target, s.why)
		return value{}
	case ins.Src == asm.PseudoMapValue && isReadOnlyData(ins.Reference()):
		return value{k: rodataPtr}
	case ins.Src == asm.R0:
		return known(uint64(ins.Constant))
	}
	return value{}
}

// isReadOnlyData tells the global data maps that cilium/ebpf freezes
// before loading programs, so the verifier reads them as constants:
// .rodata (const volatile variables, set by the user at load time) and
// .kconfig (set by the loader from the running kernel: LINUX_KERNEL_VERSION,
// CONFIG_*). cilium/ebpf's ELF reader marks a .kconfig load with
// metadata of its own and no reference (elf_reader.go, kconfigMetaKey).
func isReadOnlyData(ref string) bool {
	return strings.HasPrefix(ref, ".rodata") || ref == ".kconfig" || ref == ""
}

func (w *walker) load(s *state, ins *asm.Instruction) value {
	src := s.reg(uint8(ins.Src))
	size := ins.OpCode.Size().Sizeof()
	switch src.k {
	case stackPtr:
		v := s.frames[src.frame].load(int16(int64(src.n)+int64(ins.Offset)), size)
		if size < 8 && !w.model.narrowFill {
			v = blur(v)
		}
		if v.k == scalar && ins.OpCode.Mode() == asm.MemSXMode {
			v.n = signExtend(v.n, size*8)
		}
		return v
	case stackVar, rodataPtr:
		return value{k: lost}
	}
	return value{}
}

func (w *walker) store(s *state, ins *asm.Instruction) {
	dst := s.reg(uint8(ins.Dst))
	size := ins.OpCode.Size().Sizeof()
	var v value
	if ins.OpCode.Class() == asm.StClass {
		v = known(uint64(ins.Constant))
	} else {
		v = s.reg(uint8(ins.Src))
	}
	if ins.OpCode.Mode() == asm.AtomicMode {
		switch ins.OpCode.AtomicOp() {
		case loadAcquire: // dst = *(src + off)
			if ins.Dst != asm.R10 {
				s.top().regs[ins.Dst] = w.load(s, ins)
			}
			return
		case storeRelease: // *(dst + off) = src, a store
		default:
			w.atomic(s, ins, dst)
			return
		}
	}
	switch dst.k {
	case stackPtr:
		s.frames[dst.frame].store(int16(int64(dst.n)+int64(ins.Offset)), size, v)
	case stackVar:
		s.frames[dst.frame].forget(-1 << 15)
	}
}

// The atomic operations without a fetch flag that load or store
// (asm/load_store.go: loadAcquire, storeRelease, unexported).
const (
	loadAcquire  asm.AtomicOp = 0x1_0000
	storeRelease asm.AtomicOp = 0x1_1000
	fetchFlag    asm.AtomicOp = 0x100
)

// atomic is a read-modify-write: the memory and any register it
// fetches into are no longer known.
func (w *walker) atomic(s *state, ins *asm.Instruction, dst value) {
	fetched := value{}
	switch dst.k {
	case stackPtr, stackVar:
		s.frames[dst.frame].forget(-1 << 15)
		fetched = value{k: lost}
	}
	switch op := ins.OpCode.AtomicOp(); {
	case op == asm.CmpXchg:
		s.top().regs[0] = fetched
	case op&fetchFlag != 0 && ins.Src != asm.R10:
		s.top().regs[ins.Src] = fetched
	}
}

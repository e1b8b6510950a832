package predict

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// jump executes a jump, call or exit.
func (w *walker) jump(s *state, ins *asm.Instruction) (*state, bool) {
	op := ins.OpCode.JumpOp()
	switch op {
	case asm.Exit:
		return nil, w.exit(s)
	case asm.Call:
		return nil, w.call(s, ins)
	case asm.Ja:
		off := int(ins.Offset)
		if ins.OpCode.Class() == asm.Jump32Class { // gotol
			off = int(ins.Constant)
		}
		return nil, w.goTo(s, off)
	}

	is32 := ins.OpCode.Class() == asm.Jump32Class
	a := s.reg(uint8(ins.Dst))
	b := known(uint64(ins.Constant))
	if ins.OpCode.Source() == asm.RegSource {
		b = s.reg(uint8(ins.Src))
	}
	imm := ins.OpCode.Source() == asm.ImmSource
	taken, decided := decide(op, a, b, is32)
	if decided && w.model.decides(op, imm, is32, a.k == scalar) {
		if taken {
			return nil, w.goTo(s, int(ins.Offset))
		}
		s.pc++
		return nil, true
	}

	// Both ways. The verifier learns a register's value from a 64-bit
	// equality with a constant; so does the walk.
	jumped := s.clone()
	if !is32 && (op == asm.JEq || op == asm.JNE) && imm && ins.Dst != asm.R10 {
		eq := jumped
		if op == asm.JNE {
			eq = s
		}
		eq.top().regs[ins.Dst] = b
	}
	switch {
	case decided:
		// The way the constants go is the program's; the other one
		// only an older verifier explores, if it does.
		dead := s
		if !taken {
			dead = jumped
		}
		if dead.why == -1 {
			dead.why = w.reason(s.pc, fmt.Sprintf("the jump at insn %d%s is decided by constants, but this kernel's verifier may not decide it (older verifiers compare fewer kinds of operands): %s", s.pc, sourceOf(w.insns, s.pc), w.model.jumpsWhy))
		}
	case a.k == lost || b.k == lost:
		if s.why == -1 {
			fill := ""
			if !w.model.narrowFill {
				fill = ", or a narrow fill, which this kernel's verifier may forget: " + w.model.fillWhy
			}
			s.why = w.reason(s.pc, fmt.Sprintf("the jump at insn %d%s tests a value the verifier may know but the analysis does not track (read from .rodata or .kconfig, or computed by a division, negation or byte swap%s)", s.pc, sourceOf(w.insns, s.pc), fill))
			jumped.why = s.why
		}
	}
	s.pc++
	if !w.goTo(jumped, int(ins.Offset)) {
		return nil, false
	}
	return jumped, true
}

// goTo moves s by a jump offset in raw instructions.
func (w *walker) goTo(s *state, off int) bool {
	target, ok := w.at(w.offsets[s.pc] + 1 + off)
	if !ok {
		w.stop(s.pc, "jump into the middle of an instruction")
		return false
	}
	s.pc = target
	return true
}

// decides says whether the modelled verifier decides a jump whose
// outcome the walk knows: scalars is false for a pointer against 0.
func (m model) decides(op asm.JumpOp, imm, is32, scalars bool) bool {
	switch m.jumps {
	case jumpsEqImm:
		return scalars && imm && !is32 && (op == asm.JEq || op == asm.JNE)
	case jumpsImm:
		return scalars && imm
	}
	return true
}

// decide tells a conditional jump's outcome where the verifier knows it.
func decide(op asm.JumpOp, a, b value, is32 bool) (taken, ok bool) {
	if a.k == scalar && b.k == scalar {
		return compare(op, a.n, b.n, is32), true
	}
	// A pointer the verifier knows is not null, against 0.
	if !is32 && b.k == scalar && b.n == 0 && a.isPtr() {
		switch op {
		case asm.JEq:
			return false, true
		case asm.JNE:
			return true, true
		}
	}
	return false, false
}

func compare(op asm.JumpOp, x, y uint64, is32 bool) bool {
	sx, sy := int64(x), int64(y)
	if is32 {
		x, y = uint64(uint32(x)), uint64(uint32(y))
		sx, sy = int64(int32(x)), int64(int32(y))
	}
	switch op {
	case asm.JEq:
		return x == y
	case asm.JNE:
		return x != y
	case asm.JGT:
		return x > y
	case asm.JGE:
		return x >= y
	case asm.JLT:
		return x < y
	case asm.JLE:
		return x <= y
	case asm.JSGT:
		return sx > sy
	case asm.JSGE:
		return sx >= sy
	case asm.JSLT:
		return sx < sy
	case asm.JSLE:
		return sx <= sy
	case asm.JSet:
		return x&y != 0
	}
	return false
}

// call enters a static function (the verifier follows it with the
// caller's arguments and returns its r0), or stands for a helper, kfunc
// or global function: r0 unknown, r1-r5 clobbered.
func (w *walker) call(s *state, ins *asm.Instruction) bool {
	if ins.IsFunctionCall() {
		target, ok := w.symbols[ins.Reference()]
		if !ok {
			target, ok = w.at(w.offsets[s.pc] + 1 + int(ins.Constant))
		}
		if !ok {
			w.stop(s.pc, "call to %q: no such function", ins.Reference())
			return false
		}
		if w.isGlobal(target) {
			w.enqueue(target, s.why)
		} else {
			if len(s.frames) >= maxFrames {
				w.stop(s.pc, "calls nest deeper than %d frames", maxFrames)
				return false
			}
			callee := frame{ret: s.pc + 1}
			copy(callee.regs[1:6], s.top().regs[1:6])
			s.frames = append(s.frames, callee)
			s.pc = target
			return true
		}
	} else if !ins.IsBuiltinCall() && !ins.IsKfuncCall() {
		w.stop(s.pc, "indirect call")
		return false
	} else if !readsOnly[ins.Constant] || ins.IsKfuncCall() {
		w.helperWrites(s)
	}
	f := s.top()
	f.clobber()
	f.regs[0] = value{}
	s.pc++
	return true
}

// readsOnly holds the helpers, among those programs call most, that only
// read memory through their pointer arguments: the stack they point to
// keeps what the walk knows.
var readsOnly = map[int64]bool{
	int64(asm.FnMapLookupElem):   true,
	int64(asm.FnMapUpdateElem):   true,
	int64(asm.FnMapDeleteElem):   true,
	int64(asm.FnTracePrintk):     true,
	int64(asm.FnPerfEventOutput): true,
	int64(asm.FnMapPushElem):     true,
	int64(asm.FnRingbufOutput):   true,
}

// helperWrites forgets the stack a helper may write through pointer
// arguments: size bytes where the next argument is a known size,
// everything above the pointer otherwise.
func (w *walker) helperWrites(s *state) {
	f := s.top()
	for r := 1; r <= 5; r++ {
		p := f.regs[r]
		switch p.k {
		case stackVar:
			s.frames[p.frame].forget(-1 << 15)
		case stackPtr:
			off := int16(int64(p.n))
			if r < 5 && f.regs[r+1].k == scalar && f.regs[r+1].n < 1<<15 {
				size := int(f.regs[r+1].n)
				// What the helper wrote, the verifier does not know
				// either.
				if size > 0 {
					drop(&s.frames[p.frame], off, size)
				}
				continue
			}
			s.frames[p.frame].forget(off)
		}
	}
}

// drop forgets [off, off+size) of a frame's stack: unknown to the
// verifier as well.
func drop(f *frame, off int16, size int) {
	for size > 0 {
		n := min(size, 8)
		f.store(off, n, value{})
		off += int16(n)
		size -= n
	}
}

// exit returns from a function: r0 goes to the caller, r1-r5 are
// clobbered. It ends the path in an entry.
func (w *walker) exit(s *state) bool {
	if len(s.frames) == 1 {
		return false
	}
	f := s.top()
	r0, ret := f.regs[0], f.ret
	if (r0.k == stackPtr || r0.k == stackVar) && int(r0.frame) == len(s.frames)-1 {
		r0 = value{}
	}
	s.frames = s.frames[:len(s.frames)-1]
	s.dropDangling()
	caller := s.top()
	caller.clobber()
	caller.regs[0] = r0
	s.pc = ret
	return true
}

// sourceOf is the C line that line info gives instruction pc, quoted,
// or nothing where the instruction has none of its own: the line before
// it is often an inlined caller's, which misleads more than it helps.
func sourceOf(insns asm.Instructions, pc int) string {
	if src := insns[pc].Source(); src != nil {
		if line := fmt.Sprint(src); line != "" {
			return fmt.Sprintf(" (%q)", trimSource(line))
		}
	}
	return ""
}

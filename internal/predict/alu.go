package predict

import (
	"github.com/cilium/ebpf/asm"
)

// alu computes the new value of an ALU instruction's destination. It
// follows what the verifier tracks exactly (moves, add, sub, mul, and,
// or, xor, shifts by less than the width); division, modulo, negation
// and byte swaps are not tracked the same way by every kernel, so their
// result is lost.
func (w *walker) alu(s *state, ins *asm.Instruction) value {
	is64 := ins.OpCode.Class() == asm.ALU64Class
	op := ins.OpCode.ALUOp()
	dst := s.reg(uint8(ins.Dst))
	if op == asm.Swap || op == asm.Neg {
		return blur(dst)
	}
	src := known(uint64(ins.Constant))
	if ins.OpCode.Source() == asm.RegSource {
		src = s.reg(uint8(ins.Src))
	}
	width := 32
	if is64 {
		width = 64
	}

	if op == asm.Mov {
		switch {
		case src.k == scalar && ins.Offset != 0: // movsx
			return known(truncate(signExtend(src.n, int(ins.Offset)), width))
		case src.k == scalar:
			return known(truncate(src.n, width))
		case is64 && ins.Offset == 0:
			return src
		case src.isPtr():
			return value{} // the verifier forgets a truncated pointer
		}
		return src
	}

	if dst.isPtr() || src.isPtr() {
		return pointerArith(op, dst, src, is64)
	}
	if dst.k != scalar || src.k != scalar {
		// x & 0 and x * 0 are 0 to the verifier whatever x is.
		if (op == asm.And || op == asm.Mul) && (dst.k == scalar && dst.n == 0 || src.k == scalar && src.n == 0) {
			return known(0)
		}
		if op == asm.Div || op == asm.Mod {
			return blur(dst, src)
		}
		// The verifier follows the operation but does not know an
		// operand: it does not know the result either.
		return unknownOf(dst, src)
	}

	a, b := truncate(dst.n, width), truncate(src.n, width)
	var r uint64
	switch op {
	case asm.Add:
		r = a + b
	case asm.Sub:
		r = a - b
	case asm.Mul:
		r = a * b
	case asm.And:
		r = a & b
	case asm.Or:
		r = a | b
	case asm.Xor:
		r = a ^ b
	case asm.LSh, asm.RSh, asm.ArSh:
		if b >= uint64(width) {
			return value{} // the verifier makes the result unknown
		}
		switch op {
		case asm.LSh:
			r = a << b
		case asm.RSh:
			r = a >> b
		default:
			r = uint64(int64(signExtend(a, width)) >> b)
		}
	default: // Div, Mod (signed or not)
		return blur(dst, src)
	}
	return known(truncate(r, width))
}

// pointerArith: adding to or subtracting from a pointer keeps what it
// points into; anything else the verifier refuses or forgets.
func pointerArith(op asm.ALUOp, dst, src value, is64 bool) value {
	if !is64 || (op != asm.Add && op != asm.Sub) {
		return value{}
	}
	ptr, off := dst, src
	if !dst.isPtr() {
		if op == asm.Sub {
			return value{} // scalar - pointer
		}
		ptr, off = src, dst
	} else if src.isPtr() {
		return value{} // pointer - pointer: a scalar
	}
	if ptr.k != stackPtr {
		return ptr
	}
	if off.k != scalar {
		return value{k: stackVar, frame: ptr.frame}
	}
	if op == asm.Sub {
		ptr.n -= off.n
	} else {
		ptr.n += off.n
	}
	return ptr
}

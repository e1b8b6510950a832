package predict

import (
	"encoding/binary"
	"slices"
)

// maxFrames is the verifier's MAX_CALL_FRAMES: the deepest bpf-to-bpf
// call chain it accepts.
const maxFrames = 8

// slot is what the walk knows about stack bytes [off, off+size) of a
// frame, written by one store.
type slot struct {
	off  int16
	size uint8
	v    value
}

// frame is one function invocation: its registers r0-r9 (r10 is the
// frame's stack pointer), its stack and where its caller continues.
type frame struct {
	regs  [10]value
	stack []slot // sorted by off; overlapping slots are possible, see store
	ret   int    // instruction the caller continues at; -1 in an entry
}

// state is one path of the walk at one instruction.
type state struct {
	pc     int
	frames []frame
	// why indexes walker.why: the first jump on this path that the walk
	// took both ways although the verifier might know its outcome; -1
	// if every jump on the path went the verifier's way.
	why int
}

func (s *state) top() *frame { return &s.frames[len(s.frames)-1] }

func (s *state) reg(r uint8) value {
	if r == 10 {
		return value{k: stackPtr, frame: uint8(len(s.frames) - 1)}
	}
	return s.top().regs[r]
}

func (s *state) clone() *state {
	c := &state{pc: s.pc, why: s.why, frames: make([]frame, len(s.frames))}
	for i, f := range s.frames {
		c.frames[i] = f
		c.frames[i].stack = slices.Clone(f.stack)
	}
	return c
}

// dropDangling forgets pointers into frames that have returned, which a
// function may have left in its caller's stack: the verifier would
// refuse to use them.
func (s *state) dropDangling() {
	dangling := func(v value) bool {
		return (v.k == stackPtr || v.k == stackVar) && int(v.frame) >= len(s.frames)
	}
	for i := range s.frames {
		f := &s.frames[i]
		for r, v := range f.regs {
			if dangling(v) {
				f.regs[r] = value{}
			}
		}
		for j, sl := range f.stack {
			if dangling(sl.v) {
				f.stack[j].v = value{}
			}
		}
	}
}

// clobber marks r1-r5 unknown, as a call does.
func (f *frame) clobber() {
	for r := 1; r <= 5; r++ {
		f.regs[r] = value{}
	}
}

// load reads size bytes at off. Only a load that matches one store
// exactly gives its value: the verifier tracks spills and fills of the
// same size.
func (f *frame) load(off int16, size int) value {
	var out value
	hit := false
	for _, s := range f.stack {
		if s.off == off && int(s.size) == size {
			return s.v
		}
		if s.off < off+int16(size) && off < s.off+int16(s.size) {
			hit = true
			if s.v.k != unknown {
				out = value{k: lost}
			}
		}
	}
	if !hit {
		return value{}
	}
	return out
}

// store records v written to [off, off+size). Slots it covers are
// dropped; slots it overlaps in part keep only that they held
// something.
func (f *frame) store(off int16, size int, v value) {
	end := off + int16(size)
	kept := f.stack[:0]
	for _, s := range f.stack {
		switch {
		case s.off+int16(s.size) <= off || end <= s.off:
			kept = append(kept, s)
		case off <= s.off && s.off+int16(s.size) <= end:
			// covered
		default:
			s.v = blur(s.v)
			kept = append(kept, s)
		}
	}
	f.stack = kept
	if v.k == scalar {
		v.n = truncate(v.n, size*8)
	} else if size != 8 && v.k != unknown {
		v = value{k: lost} // part of a pointer
	}
	i, _ := slices.BinarySearchFunc(f.stack, off, func(s slot, off int16) int { return int(s.off) - int(off) })
	f.stack = slices.Insert(f.stack, i, slot{off: off, size: uint8(size), v: v})
}

// forget marks every slot from off up as lost: something wrote there,
// the walk does not know how much.
func (f *frame) forget(from int16) {
	for i := range f.stack {
		if f.stack[i].off+int16(f.stack[i].size) > from {
			f.stack[i].v = blur(f.stack[i].v)
		}
	}
}

// key encodes the state for the walk's memo of states seen.
func (s *state) key(buf []byte) []byte {
	buf = binary.AppendVarint(buf, int64(s.pc))
	buf = binary.AppendVarint(buf, int64(s.why))
	for _, f := range s.frames {
		buf = binary.AppendVarint(buf, int64(f.ret))
		for _, v := range f.regs {
			buf = v.append(buf)
		}
		buf = binary.AppendUvarint(buf, uint64(len(f.stack)))
		for _, sl := range f.stack {
			buf = binary.AppendVarint(buf, int64(sl.off))
			buf = append(buf, sl.size)
			buf = sl.v.append(buf)
		}
	}
	return buf
}

func (v value) append(buf []byte) []byte {
	buf = append(buf, byte(v.k), v.frame)
	return binary.AppendUvarint(buf, v.n)
}

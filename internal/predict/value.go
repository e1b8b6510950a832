package predict

// kind says what the walk knows about a register or stack slot.
type kind uint8

const (
	// unknown: a value the verifier does not know either (read from
	// memory, returned by a helper), so it follows both ways of a jump
	// on it.
	unknown kind = iota
	// lost: a value the verifier may know but the walk does not (read
	// from .rodata, computed by an operation the walk does not follow).
	// A jump on it is explored both ways and marks the path undecided.
	lost
	// scalar: the constant n.
	scalar
	// stackPtr: frame's stack pointer plus n (a negative offset).
	stackPtr
	// stackVar: a pointer into frame's stack at an offset not known.
	stackVar
	// rodataPtr: a pointer into a read-only global data map, which the
	// verifier reads constants through once the map is frozen.
	rodataPtr
)

// value is what the walk knows about one register or stack slot.
type value struct {
	k     kind
	frame uint8 // stackPtr, stackVar: the frame whose stack it points into
	n     uint64
}

func known(n uint64) value { return value{k: scalar, n: n} }

// isPtr reports whether the verifier knows the value is a non-null
// pointer.
func (v value) isPtr() bool { return v.k == stackPtr || v.k == stackVar || v.k == rodataPtr }

// blur is what becomes of a value that an operation the walk does not
// follow touches: the verifier still knows what it knew from the
// operands, the walk does not.
func blur(vs ...value) value {
	for _, v := range vs {
		if v.k != unknown {
			return value{k: lost}
		}
	}
	return value{k: unknown}
}

// unknownOf is the result of an operation the verifier follows exactly
// on operands not all known: lost if the walk lost one, unknown
// otherwise.
func unknownOf(vs ...value) value {
	for _, v := range vs {
		if v.k == lost {
			return value{k: lost}
		}
	}
	return value{}
}

func signExtend(n uint64, width int) uint64 {
	if width <= 0 || width >= 64 {
		return n
	}
	shift := 64 - width
	return uint64(int64(n<<shift) >> shift)
}

func truncate(n uint64, width int) uint64 {
	if width >= 64 {
		return n
	}
	return n & (1<<width - 1)
}

package coremin

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Two outcomes of a relocation against one candidate are not errors: the
// candidate does not fit (errImpossible for field and enum kinds,
// errIncompatible for type kinds). Any other error aborts the whole
// relocation of the program in cilium/ebpf, and so it does here.
var (
	errImpossible   = errors.New("impossible relocation")
	errIncompatible = errors.New("incompatible types")
	errNotSupported = errors.New("not supported")
)

// fixup is the result of one relocation against one candidate, the
// equivalent of btf.COREFixup.
type fixup struct {
	kind          Kind
	local, target uint64
	poison        bool
}

// failed reports whether the candidate did not fit: cilium/ebpf scores
// such a fixup as a miss.
func (f fixup) failed() bool {
	return f.poison || (f.kind.checksExistence() && f.target == 0)
}

func missing(k Kind) fixup {
	if k.checksExistence() {
		return fixup{kind: k, local: 1, target: 0}
	}
	return fixup{kind: k, poison: true}
}

// calcFixup computes relocation r against candidate cand (a target type),
// the equivalent of btf's coreCalculateFixup. w logs what of the target it
// reads.
func (w *walker) calcFixup(r *Relocation, bo binary.ByteOrder, cand node) (fixup, error) {
	ok := func(local, target uint64) (fixup, error) {
		return fixup{kind: r.Kind, local: local, target: target}, nil
	}
	local, err := w.typ(localSide, r.TypeID)
	if err != nil {
		return fixup{}, err
	}

	switch {
	case r.Kind == TypeMatches:
		if len(r.accessor) > 1 || r.accessor[0] != 0 {
			return fixup{}, fmt.Errorf("unexpected accessor %v", r.accessor)
		}
		err := w.typesMatch(local, cand, nil)
		if errors.Is(err, errIncompatible) {
			return missing(r.Kind), nil
		}
		if err != nil {
			return fixup{}, err
		}
		return ok(1, 1)

	case r.Kind == TypeIDTarget || r.Kind == TypeSize || r.Kind == TypeExists:
		if len(r.accessor) > 1 || r.accessor[0] != 0 {
			return fixup{}, fmt.Errorf("unexpected accessor %v", r.accessor)
		}
		err := w.typesCompatible(local, cand, nil)
		if errors.Is(err, errIncompatible) {
			return missing(r.Kind), nil
		}
		if err != nil {
			return fixup{}, err
		}
		switch r.Kind {
		case TypeExists:
			return ok(1, 1)
		case TypeIDTarget:
			// Only vmlinux IDs can be encoded in an instruction.
			if cand.side != 0 {
				return missing(r.Kind), nil
			}
			return ok(uint64(r.TypeID), uint64(cand.ID))
		default:
			ls, err := w.sizeof(local)
			if err != nil {
				return fixup{}, err
			}
			ts, err := w.sizeof(cand)
			if err != nil {
				return fixup{}, err
			}
			return ok(ls, ts)
		}

	case r.Kind.isEnumval():
		lv, tv, err := w.findEnumValue(local, r.accessor, cand)
		if errors.Is(err, errImpossible) {
			return missing(r.Kind), nil
		}
		if err != nil {
			return fixup{}, err
		}
		if r.Kind == EnumvalExists {
			return ok(1, 1)
		}
		return ok(lv, tv)

	case r.Kind.isField():
		if _, ok := w.as(cand, isFwd); ok {
			// Fields can't be found in a forward declaration.
			return missing(r.Kind), nil
		}
		lf, tf, err := w.findField(local, r.accessor, cand)
		if errors.Is(err, errImpossible) {
			return missing(r.Kind), nil
		}
		if err != nil {
			return fixup{}, err
		}
		return w.fieldFixup(r.Kind, bo, lf, tf)
	}
	return fixup{}, fmt.Errorf("%v: %w", r.Kind, errNotSupported)
}

func (w *walker) fieldFixup(k Kind, bo binary.ByteOrder, lf, tf field) (fixup, error) {
	ok := func(local, target uint64) (fixup, error) {
		return fixup{kind: k, local: local, target: target}, nil
	}
	switch k {
	case FieldExists:
		return ok(1, 1)
	case FieldByteOffset:
		return ok(uint64(lf.offset), uint64(tf.offset))
	case FieldByteSize:
		ls, err := w.sizeof(lf.typ)
		if err != nil {
			return fixup{}, err
		}
		ts, err := w.sizeof(tf.typ)
		if err != nil {
			return fixup{}, err
		}
		return ok(ls, ts)
	case FieldLShiftU64:
		if bo == binary.LittleEndian {
			bits, err := w.sizeBits(tf)
			if err != nil {
				return fixup{}, err
			}
			return ok(0, uint64(uint32(64-tf.bitOffset-bits)))
		}
		width, err := w.sizeof(tf.typ)
		if err != nil {
			return fixup{}, err
		}
		return ok(0, uint64(uint32(64-uint32(width*8)+tf.bitOffset)))
	case FieldRShiftU64:
		bits, err := w.sizeBits(tf)
		if err != nil {
			return fixup{}, err
		}
		return ok(0, uint64(uint32(64-bits)))
	case FieldSigned:
		lu, err := w.underlying(lf.typ)
		if err != nil {
			return fixup{}, err
		}
		switch lu.Kind {
		case rawbtf.KindEnum, rawbtf.KindEnum64:
			tu, match := w.as(tf.typ, isEnum)
			if !match {
				return fixup{}, errors.New("target isn't an enum")
			}
			return ok(boolBit(lu.Signed()), boolBit(tu.Signed()))
		case rawbtf.KindInt:
			tu, match := w.as(tf.typ, isInt)
			if !match {
				return fixup{}, errors.New("target isn't an int")
			}
			return ok(uint64(lu.Int().Encoding&rawbtf.IntSigned), uint64(tu.Int().Encoding&rawbtf.IntSigned))
		default:
			return fixup{}, fmt.Errorf("type %v: no signedness", lu.Kind)
		}
	}
	return fixup{}, fmt.Errorf("%v: %w", k, errNotSupported)
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// findEnumValue resolves an enumerator access: the local enumerator at
// acc[0] and the first target enumerator with the same essential name.
func (w *walker) findEnumValue(local node, acc []int, cand node) (lv, tv uint64, err error) {
	le, ok := w.as(local, isEnum)
	if !ok {
		return 0, 0, fmt.Errorf("not an enum: %v %q", local.Kind, local.Name)
	}
	if len(acc) > 1 {
		return 0, 0, fmt.Errorf("invalid accessor %v for enum", acc)
	}
	if acc[0] >= le.Vlen {
		return 0, 0, fmt.Errorf("invalid index %d for enum %q", acc[0], le.Name)
	}
	lval := le.EnumValue(acc[0])
	te, ok := w.as(cand, isEnum)
	if !ok {
		return 0, 0, errImpossible
	}
	name := rawbtf.EssentialName(lval.Name)
	for i := range te.Vlen {
		v := te.EnumValue(i)
		if rawbtf.EssentialName(v.Name) == name {
			w.touchValue(te, i)
			return lval.Value, v.Value, nil
		}
	}
	return 0, 0, errImpossible
}

package coremin

import (
	"errors"
	"fmt"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// maxResolveDepth bounds typedef/qualifier chains and anonymous member
// nesting, as cilium/ebpf's btf.maxResolveDepth does.
const maxResolveDepth = 32

// localSide marks a node of the object's own BTF; target nodes carry the
// index of their spec in the target list.
const localSide = -1

// node is a type of either the local (object) BTF or one of the targets.
type node struct {
	rawbtf.Type
	side int
}

// key names a target type: the target spec it belongs to and its ID.
// Types of a module's base are keyed with spec 0.
type key struct {
	spec int
	id   rawbtf.TypeID
}

// keyOf is the key of type id as seen from target spec: a module's
// reference below its first ID is to a vmlinux type, which belongs to
// spec 0 whichever module refers to it.
func keyOf(targets []*rawbtf.Spec, spec int, id rawbtf.TypeID) key {
	if spec > 0 && id < targets[spec].FirstID() {
		spec = 0
	}
	return key{spec, id}
}

// touchWhat says what part of a target type a computation relied on.
type touchWhat uint8

const (
	touchType       touchWhat = iota // the type record itself
	touchMember                      // member idx of a STRUCT/UNION
	touchValue                       // enumerator idx of an ENUM/ENUM64
	touchMinMembers                  // at least idx members must be kept
	touchMinValues                   // at least idx enumerators must be kept
)

type touch struct {
	key  key
	what touchWhat
	idx  int
}

// walker resolves types of one object and the targets and logs every
// target type, member and enumerator a computation reads.
type walker struct {
	local   *rawbtf.Spec
	targets []*rawbtf.Spec
	log     []touch

	// findMember's scratch.
	steps   []memberStep
	visited []visit
}

var errCycle = errors.New("type chain too long or cyclic")

// typ returns type id of side, logging it if side is a target.
func (w *walker) typ(side int, id rawbtf.TypeID) (node, error) {
	if side == localSide {
		t, err := w.local.Type(id)
		return node{t, side}, err
	}
	k := keyOf(w.targets, side, id)
	t, err := w.targets[k.spec].Type(id)
	if err != nil {
		return node{}, err
	}
	if id != 0 {
		// Void is no type record: every BTF has it, as ID 0.
		w.log = append(w.log, touch{key: k, what: touchType})
	}
	return node{t, k.spec}, nil
}

func (w *walker) key(n node) key { return key{n.side, n.ID} }

func (w *walker) touchMember(n node, i int) {
	if n.side != localSide {
		w.log = append(w.log, touch{key: w.key(n), what: touchMember, idx: i})
	}
}

func (w *walker) touchValue(n node, i int) {
	if n.side != localSide {
		w.log = append(w.log, touch{key: w.key(n), what: touchValue, idx: i})
	}
}

func (w *walker) touchAtLeast(n node, what touchWhat, count int) {
	if n.side != localSide {
		w.log = append(w.log, touch{key: w.key(n), what: what, idx: count})
	}
}

// isSkipped reports whether k is skipped when looking for the type
// underneath: typedefs, qualifiers and type tags.
func isSkipped(k rawbtf.Kind) bool {
	switch k {
	case rawbtf.KindTypedef, rawbtf.KindVolatile, rawbtf.KindConst, rawbtf.KindRestrict, rawbtf.KindTypeTag:
		return true
	}
	return false
}

// underlying skips typedefs, qualifiers and type tags, like
// btf.UnderlyingType.
func (w *walker) underlying(n node) (node, error) {
	for range maxResolveDepth + 1 {
		if !isSkipped(n.Kind) {
			return n, nil
		}
		next, err := w.typ(n.side, n.Ref())
		if err != nil {
			return node{}, err
		}
		n = next
	}
	return node{}, fmt.Errorf("type %d: %w", n.ID, errCycle)
}

// underlyingPair resolves a local and a target type to what they are
// beneath typedefs and qualifiers, as every compatibility check starts.
func (w *walker) underlyingPair(local, target node) (node, node, error) {
	l, err := w.underlying(local)
	if err != nil {
		return node{}, node{}, err
	}
	t, err := w.underlying(target)
	if err != nil {
		return node{}, node{}, err
	}
	return l, t, nil
}

// class folds kinds cilium/ebpf models with one Go type: ENUM and ENUM64
// are both *btf.Enum.
func class(k rawbtf.Kind) rawbtf.Kind {
	if k == rawbtf.KindEnum64 {
		return rawbtf.KindEnum
	}
	return k
}

// as skips typedefs and qualifiers until it finds a type whose kind
// satisfies ok, like btf.As.
func (w *walker) as(n node, ok func(rawbtf.Kind) bool) (node, bool) {
	u, err := w.underlying(n)
	if err != nil || !ok(u.Kind) {
		return node{}, false
	}
	return u, true
}

func isComposite(k rawbtf.Kind) bool { return k.IsComposite() }
func isEnum(k rawbtf.Kind) bool      { return k.IsEnum() }
func isFwd(k rawbtf.Kind) bool       { return k == rawbtf.KindFwd }
func isArray(k rawbtf.Kind) bool     { return k == rawbtf.KindArray }
func isInt(k rawbtf.Kind) bool       { return k == rawbtf.KindInt }

var errUnsized = errors.New("type has no size")

// sizeof is btf.Sizeof: arrays multiply, typedefs and qualifiers are
// skipped, pointers are 8 bytes.
func (w *walker) sizeof(n node) (uint64, error) {
	mult := uint64(1)
	for range maxResolveDepth {
		var elem uint64
		switch n.Kind {
		case rawbtf.KindArray:
			a := n.Array()
			if mult > 0 && uint64(a.Nelems) > (1<<63-1)/mult {
				return 0, fmt.Errorf("type %d: size overflow", n.ID)
			}
			mult *= uint64(a.Nelems)
			next, err := w.typ(n.side, a.Type)
			if err != nil {
				return 0, err
			}
			n = next
			continue
		case rawbtf.KindTypedef, rawbtf.KindVolatile, rawbtf.KindConst, rawbtf.KindRestrict, rawbtf.KindTypeTag:
			next, err := w.typ(n.side, n.Ref())
			if err != nil {
				return 0, err
			}
			n = next
			continue
		case rawbtf.KindPtr:
			elem = 8
		case rawbtf.KindVoid:
			elem = 0
		case rawbtf.KindInt, rawbtf.KindStruct, rawbtf.KindUnion, rawbtf.KindEnum, rawbtf.KindEnum64, rawbtf.KindFloat, rawbtf.KindDatasec:
			elem = uint64(n.Size())
		default:
			return 0, fmt.Errorf("type %d (%v): %w", n.ID, n.Kind, errUnsized)
		}
		if mult > 0 && elem > (1<<63-1)/mult {
			return 0, fmt.Errorf("type %d: size overflow", n.ID)
		}
		return mult * elem, nil
	}
	return 0, fmt.Errorf("type %d: %w", n.ID, errCycle)
}

// alignof is the load alignment btf uses for bitfields: the size of the
// underlying INT or ENUM, looking through arrays.
func (w *walker) alignof(n node) (uint64, error) {
	for range maxResolveDepth {
		u, err := w.underlying(n)
		if err != nil {
			return 0, err
		}
		var a uint64
		switch u.Kind {
		case rawbtf.KindInt, rawbtf.KindEnum, rawbtf.KindEnum64:
			a = uint64(u.Size())
		case rawbtf.KindArray:
			n, err = w.typ(u.side, u.Array().Type)
			if err != nil {
				return 0, err
			}
			continue
		default:
			return 0, fmt.Errorf("can't calculate alignment of %v", u.Kind)
		}
		if a == 0 || a&(a-1) != 0 {
			return 0, fmt.Errorf("alignment value %d is not a power of two", a)
		}
		return a, nil
	}
	return 0, fmt.Errorf("type %d: %w", n.ID, errCycle)
}

// member is member i of composite n with legacy bitfields folded in: in a
// composite without kind_flag, a member whose INT type has a bit offset or
// fewer bits than its size is a bitfield (btf/unmarshal.go does the same).
func (w *walker) member(n node, i int) rawbtf.Member {
	m := n.Member(i)
	if n.KindFlag {
		return m
	}
	spec := n.Spec()
	t, err := spec.Type(m.Type)
	if err != nil || t.Kind != rawbtf.KindInt {
		return m
	}
	enc := t.Int()
	if enc.Offset > 0 || uint32(enc.Bits)/8 != t.Size() {
		m.BitOffset += uint32(enc.Offset)
		m.BitfieldSize = uint32(enc.Bits)
	}
	return m
}

// essentialNamesMatch compares names without flavour; an anonymous name
// matches anything (coreEssentialNamesMatch).
func essentialNamesMatch(a, b string) bool {
	if a == "" || b == "" {
		return true
	}
	return rawbtf.EssentialName(a) == rawbtf.EssentialName(b)
}

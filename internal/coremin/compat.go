package coremin

import (
	"fmt"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

type pair struct{ l, t key }

// typesCompatible is the layout check of type-based relocations
// (type_exists, type_size, target_type_id): kinds must agree, pointers,
// arrays and function prototypes are compared recursively, names below the
// root are ignored (btf's coreAreTypesCompatible).
func (w *walker) typesCompatible(local, target node, visited map[pair]bool) error {
	l, t, err := w.underlyingPair(local, target)
	if err != nil {
		return err
	}
	if class(l.Kind) != class(t.Kind) {
		return fmt.Errorf("type mismatch %v vs %v: %w", l.Kind, t.Kind, errIncompatible)
	}
	p := pair{w.key(l), w.key(t)}
	if visited[p] {
		return nil
	}
	if visited == nil {
		visited = make(map[pair]bool)
	}
	visited[p] = true

	switch l.Kind {
	case rawbtf.KindVoid, rawbtf.KindStruct, rawbtf.KindUnion, rawbtf.KindEnum, rawbtf.KindEnum64, rawbtf.KindFwd, rawbtf.KindInt:
		return nil
	case rawbtf.KindPtr:
		lt, tt, err := w.refs(l, l.Ref(), t, t.Ref())
		if err != nil {
			return err
		}
		return w.typesCompatible(lt, tt, visited)
	case rawbtf.KindArray:
		la, ta := l.Array(), t.Array()
		li, ti, err := w.refs(l, la.Index, t, ta.Index)
		if err != nil {
			return err
		}
		if err := w.typesCompatible(li, ti, visited); err != nil {
			return err
		}
		le, te, err := w.refs(l, la.Type, t, ta.Type)
		if err != nil {
			return err
		}
		return w.typesCompatible(le, te, visited)
	case rawbtf.KindFuncProto:
		lr, tr, err := w.refs(l, l.Ref(), t, t.Ref())
		if err != nil {
			return err
		}
		if err := w.typesCompatible(lr, tr, visited); err != nil {
			return err
		}
		if l.Vlen != t.Vlen {
			return fmt.Errorf("function param mismatch: %w", errIncompatible)
		}
		for i := range l.Vlen {
			lp, tp, err := w.refs(l, l.Param(i).Type, t, t.Param(i).Type)
			if err != nil {
				return err
			}
			if err := w.typesCompatible(lp, tp, visited); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unsupported type %v", l.Kind)
}

// refs resolves a reference of a local and of a target type.
func (w *walker) refs(l node, lid rawbtf.TypeID, t node, tid rawbtf.TypeID) (node, node, error) {
	ln, err := w.typ(l.side, lid)
	if err != nil {
		return node{}, node{}, err
	}
	tn, err := w.typ(t.side, tid)
	if err != nil {
		return node{}, node{}, err
	}
	return ln, tn, nil
}

// typesMatch is the stricter check of type_matches: names, sizes,
// signedness, members and enumerators must agree, recursively (btf's
// coreTypesMatch).
func (w *walker) typesMatch(local, target node, visited map[pair]bool) error {
	l, t, err := w.underlyingPair(local, target)
	if err != nil {
		return err
	}
	if !essentialNamesMatch(l.Name, t.Name) {
		return fmt.Errorf("type name %q doesn't match %q: %w", l.Name, t.Name, errIncompatible)
	}
	if class(l.Kind) != class(t.Kind) {
		return fmt.Errorf("type mismatch %v vs %v: %w", l.Kind, t.Kind, errIncompatible)
	}
	p := pair{w.key(l), w.key(t)}
	if visited[p] {
		return nil
	}
	if visited == nil {
		visited = make(map[pair]bool)
	}
	visited[p] = true

	switch l.Kind {
	case rawbtf.KindVoid:
		return nil
	case rawbtf.KindFwd:
		if l.KindFlag != t.KindFlag {
			return fmt.Errorf("fwd kind mismatch: %w", errIncompatible)
		}
		return nil
	case rawbtf.KindEnum, rawbtf.KindEnum64:
		return w.enumsMatch(l, t)
	case rawbtf.KindStruct, rawbtf.KindUnion:
		return w.compositesMatch(l, t, visited)
	case rawbtf.KindInt:
		le, te := l.Int(), t.Int()
		if l.Size() != t.Size() || (le.Encoding == rawbtf.IntSigned) != (te.Encoding == rawbtf.IntSigned) {
			return fmt.Errorf("int mismatch: %w", errIncompatible)
		}
		return nil
	case rawbtf.KindPtr:
		lp, tp, err := w.refs(l, l.Ref(), t, t.Ref())
		if err != nil {
			return err
		}
		// A pointer to a forward declaration matches a pointer to the
		// struct or union it declares, either way round.
		if w.fwdMatches(lp, tp) || w.fwdMatches(tp, lp) {
			return nil
		}
		return w.typesMatch(lp, tp, visited)
	case rawbtf.KindArray:
		la, ta := l.Array(), t.Array()
		if la.Nelems != ta.Nelems {
			return fmt.Errorf("array mismatch: %w", errIncompatible)
		}
		le, te, err := w.refs(l, la.Type, t, ta.Type)
		if err != nil {
			return err
		}
		return w.typesMatch(le, te, visited)
	case rawbtf.KindFuncProto:
		if l.Vlen != t.Vlen {
			return fmt.Errorf("function param mismatch: %w", errIncompatible)
		}
		for i := range l.Vlen {
			lp, tp, err := w.refs(l, l.Param(i).Type, t, t.Param(i).Type)
			if err != nil {
				return err
			}
			if err := w.typesMatch(lp, tp, visited); err != nil {
				return err
			}
		}
		lr, tr, err := w.refs(l, l.Ref(), t, t.Ref())
		if err != nil {
			return err
		}
		return w.typesMatch(lr, tr, visited)
	}
	return fmt.Errorf("unsupported type %v", l.Kind)
}

// fwdMatches reports whether a is (behind typedefs) a forward declaration
// of the kind of struct or union b is.
func (w *walker) fwdMatches(a, b node) bool {
	fwd, ok := w.as(a, isFwd)
	if !ok {
		return false
	}
	want := rawbtf.KindStruct
	if fwd.KindFlag {
		want = rawbtf.KindUnion
	}
	_, ok = w.as(b, func(k rawbtf.Kind) bool { return k == want })
	return ok
}

// compositesMatch: every local member must exist by name in the target
// (the last target member of that name) and match it.
func (w *walker) compositesMatch(l, t node, visited map[pair]bool) error {
	if l.Vlen > t.Vlen {
		return errIncompatible
	}
	// Several local members may map to one target member (anonymous ones
	// all map to the last anonymous target member); the minimized target
	// must keep as many members as the local type has.
	w.touchAtLeast(t, touchMinMembers, l.Vlen)
	for i := range l.Vlen {
		lm := l.Member(i)
		j := t.Vlen - 1
		for ; j >= 0 && t.Member(j).Name != lm.Name; j-- {
		}
		if j < 0 {
			return fmt.Errorf("no field %q in %q: %w", lm.Name, t.Name, errIncompatible)
		}
		w.touchMember(t, j)
		lt, tt, err := w.refs(l, lm.Type, t, t.Member(j).Type)
		if err != nil {
			return err
		}
		if err := w.typesMatch(lt, tt, visited); err != nil {
			return err
		}
	}
	return nil
}

// enumsMatch: same size, and every local enumerator has a target one of
// the same essential name.
func (w *walker) enumsMatch(l, t node) error {
	if l.Size() != t.Size() {
		return fmt.Errorf("size mismatch: %w", errIncompatible)
	}
	if l.Vlen > t.Vlen {
		return fmt.Errorf("local has more values than target: %w", errIncompatible)
	}
	w.touchAtLeast(t, touchMinValues, l.Vlen)
outer:
	for i := range l.Vlen {
		name := l.EnumValue(i).Name
		for j := range t.Vlen {
			if essentialNamesMatch(name, t.EnumValue(j).Name) {
				w.touchValue(t, j)
				continue outer
			}
		}
		return fmt.Errorf("no match for %q in %q: %w", name, t.Name, errIncompatible)
	}
	return nil
}

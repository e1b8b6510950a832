package coremin

import (
	"maps"
	"slices"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// marks is what the minimized BTF must keep of each target type.
type marks map[key]*typeMarks

// typeMarks is what to keep of one type: the type itself always, plus
// some members or enumerators, and at least minCount of them.
type typeMarks struct {
	parts    map[int]bool // member or enumerator indices
	minCount int
}

func newMarks() marks { return make(marks) }

func (m marks) get(k key) *typeMarks {
	tm := m[k]
	if tm == nil {
		tm = &typeMarks{}
		m[k] = tm
	}
	return tm
}

func (m marks) merge(log []touch) {
	for _, t := range log {
		tm := m.get(t.key)
		switch t.what {
		case touchMember, touchValue:
			if tm.parts == nil {
				tm.parts = make(map[int]bool)
			}
			tm.parts[t.idx] = true
		case touchMinMembers, touchMinValues:
			tm.minCount = max(tm.minCount, t.idx)
		}
	}
}

// close adds what kept types need to be valid BTF: the types of kept
// members, the targets of typedefs and qualifiers, array element and index
// types, a FUNC's prototype, and members or enumerators to reach each
// type's minimum count. Pointer targets and prototype parameters are not
// followed: Minimize points them to void unless marked otherwise.
func (m marks) close(targets []*rawbtf.Spec) error {
	work := slices.Collect(maps.Keys(m))
	add := func(spec int, id rawbtf.TypeID) {
		if id == 0 {
			return
		}
		k := keyOf(targets, spec, id)
		if _, ok := m[k]; !ok {
			m[k] = &typeMarks{}
			work = append(work, k)
		}
	}
	for len(work) > 0 {
		k := work[len(work)-1]
		work = work[:len(work)-1]
		t, err := targets[k.spec].Type(k.id)
		if err != nil {
			return err
		}
		tm := m[k]
		switch t.Kind {
		case rawbtf.KindTypedef, rawbtf.KindVolatile, rawbtf.KindConst, rawbtf.KindRestrict,
			rawbtf.KindTypeTag, rawbtf.KindFunc, rawbtf.KindVar, rawbtf.KindDeclTag:
			add(k.spec, t.Ref())
		case rawbtf.KindArray:
			a := t.Array()
			add(k.spec, a.Type)
			add(k.spec, a.Index)
		case rawbtf.KindStruct, rawbtf.KindUnion, rawbtf.KindEnum, rawbtf.KindEnum64:
			// Pad with the first unkept members or enumerators.
			for i := 0; i < t.Vlen && len(tm.parts) < tm.minCount; i++ {
				if tm.parts == nil {
					tm.parts = make(map[int]bool)
				}
				tm.parts[i] = true
			}
			if t.Kind.IsComposite() {
				for i := range tm.parts {
					add(k.spec, t.Member(i).Type)
				}
			}
		}
	}
	return nil
}

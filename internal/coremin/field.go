package coremin

import (
	"errors"
	"fmt"
	"slices"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// field is a position inside a composite: the type found there, its byte
// offset from the start of the outermost type and, for bitfields, the bit
// offset from that byte and the width (btf's coreField).
type field struct {
	typ          node
	offset       uint32
	bitOffset    uint32
	bitfieldSize uint32
}

func (w *walker) nthElement(f *field, n int) error {
	if n == 0 {
		return nil
	}
	size, err := w.sizeof(f.typ)
	if err != nil {
		return err
	}
	f.offset += uint32(n) * uint32(size)
	return nil
}

// adjustBits turns a member's bit offset into an aligned load offset plus
// the remaining bits, for bitfields.
func (w *walker) adjustBits(f *field, bitOff uint32) error {
	align, err := w.alignof(f.typ)
	if err != nil {
		return err
	}
	offBytes := bitOff / 8 / uint32(align) * uint32(align)
	f.bitOffset = bitOff - offBytes*8
	f.offset += offBytes
	return nil
}

// sizeBits is the width of a field in bits: the bitfield width, or the
// whole type for a field accessed like a bitfield.
func (w *walker) sizeBits(f field) (uint32, error) {
	if f.bitfieldSize > 0 {
		return f.bitfieldSize, nil
	}
	size, err := w.sizeof(f.typ)
	if err != nil {
		return 0, err
	}
	return uint32(size * 8), nil
}

// findField follows the access path acc through the local type and finds
// the same members by name in the candidate (btf's coreFindField).
func (w *walker) findField(localT node, acc []int, cand node) (field, field, error) {
	local, target := field{typ: localT}, field{typ: cand}
	if err := w.membersCompatible(local.typ, target.typ); err != nil {
		return field{}, field{}, fmt.Errorf("fields: %w", err)
	}
	if err := w.nthElement(&local, acc[0]); err != nil {
		return field{}, field{}, err
	}
	if err := w.nthElement(&target, acc[0]); err != nil {
		return field{}, field{}, err
	}

	var localMaybeFlex, targetMaybeFlex bool
	var lastFound found // the target member found last, to keep its successor
	targetSpecLen := 1  // libbpf's target spec: the first index so far
	for i, a := range acc[1:] {
		lt, err := w.underlying(local.typ)
		if err != nil {
			return field{}, field{}, err
		}
		switch {
		case lt.Kind.IsComposite():
			if a >= lt.Vlen {
				return field{}, field{}, fmt.Errorf("invalid accessor %d for %q", a, lt.Name)
			}
			lm := w.member(lt, a)
			if lm.Name == "" {
				mt, err := w.typ(localSide, lm.Type)
				if err != nil {
					return field{}, field{}, err
				}
				anon, ok := w.as(mt, isComposite)
				if !ok {
					return field{}, field{}, fmt.Errorf("unnamed field of kind %v: %w", mt.Kind, errNotSupported)
				}
				local = field{typ: anon, offset: local.offset + lm.BitOffset/8}
				localMaybeFlex = false
				continue
			}

			tt, ok := w.as(target.typ, isComposite)
			if !ok {
				return field{}, field{}, fmt.Errorf("target not composite: %w", errImpossible)
			}
			targetSpecLen = w.libbpfFindMember(tt, lm.Name, targetSpecLen)
			fm, err := w.findMember(tt, lm.Name)
			if err != nil {
				return field{}, field{}, err
			}
			lastFound = fm
			lmt, err := w.typ(localSide, lm.Type)
			if err != nil {
				return field{}, field{}, err
			}
			tmt, err := w.typ(fm.parent.side, fm.member.Type)
			if err != nil {
				return field{}, field{}, err
			}
			local = field{typ: lmt, offset: local.offset, bitfieldSize: lm.BitfieldSize}
			localMaybeFlex = a == lt.Vlen-1
			target = field{typ: tmt, offset: target.offset, bitfieldSize: fm.member.BitfieldSize}
			targetMaybeFlex = fm.last

			if local.bitfieldSize == 0 && target.bitfieldSize == 0 {
				local.offset += lm.BitOffset / 8
				target.offset += fm.member.BitOffset / 8
				break
			}
			if i+1 < len(acc[1:]) {
				return field{}, field{}, errors.New("can't descend into bitfield")
			}
			if err := w.adjustBits(&local, lm.BitOffset); err != nil {
				return field{}, field{}, err
			}
			if err := w.adjustBits(&target, fm.member.BitOffset); err != nil {
				return field{}, field{}, err
			}

		case lt.Kind == rawbtf.KindArray:
			ta, ok := w.as(target.typ, isArray)
			if !ok {
				return field{}, field{}, fmt.Errorf("target not array: %w", errImpossible)
			}
			la, tarr := lt.Array(), ta.Array()
			if la.Nelems == 0 && !localMaybeFlex {
				return field{}, field{}, errors.New("local type has invalid flexible array")
			}
			if tarr.Nelems == 0 && !targetMaybeFlex {
				// Keep what makes the array not the last member.
				if lastFound.parent.side != localSide && lastFound.index+1 < lastFound.parent.Vlen {
					w.touchMember(lastFound.parent, lastFound.index+1)
				}
				return field{}, field{}, errors.New("target type has invalid flexible array")
			}
			targetSpecLen++
			if la.Nelems > 0 && a >= int(la.Nelems) {
				return field{}, field{}, fmt.Errorf("invalid access of array at index %d", a)
			}
			if tarr.Nelems > 0 && a >= int(tarr.Nelems) {
				return field{}, field{}, fmt.Errorf("out of bounds access of target: %w", errImpossible)
			}
			le, err := w.typ(localSide, la.Type)
			if err != nil {
				return field{}, field{}, err
			}
			local = field{typ: le, offset: local.offset}
			localMaybeFlex = false
			if err := w.nthElement(&local, a); err != nil {
				return field{}, field{}, err
			}
			te, err := w.typ(ta.side, tarr.Type)
			if err != nil {
				return field{}, field{}, err
			}
			target = field{typ: te, offset: target.offset}
			targetMaybeFlex = false
			if err := w.nthElement(&target, a); err != nil {
				return field{}, field{}, err
			}

		default:
			return field{}, field{}, fmt.Errorf("relocate field of %v: %w", lt.Kind, errNotSupported)
		}

		if err := w.membersCompatible(local.typ, target.typ); err != nil {
			return field{}, field{}, err
		}
	}
	return local, target, nil
}

// found is a member located by findMember: the composite holding it, its
// index there, its bit offset from the composite searched, and whether it
// is the last member of its composite.
type found struct {
	parent node
	index  int
	member rawbtf.Member
	last   bool
}

// memberStep is a composite findMember searches: the root, or one held
// by an anonymous member of an earlier step.
type memberStep struct {
	comp   node
	offset uint32 // bit offset of comp in the root
	from   int    // index of the step holding the anonymous member, -1 at the root
	member int    // index of that member in from's composite
}

// visit is a composite findMember searched, at its offset in the root.
type visit struct {
	k      key
	offset uint32
}

// findMember searches composite typ for a member called name, descending
// breadth first into anonymous structs and unions (btf's coreFindMember).
// On success it logs the found member and the anonymous members leading
// to it, not the rest of the search.
func (w *walker) findMember(typ node, name string) (found, error) {
	if name == "" {
		return found{}, errors.New("can't search for anonymous member")
	}
	mark := len(w.log)
	// The search's scratch is the walker's: it runs for every field
	// relocation on every candidate.
	steps := append(w.steps[:0], memberStep{typ, 0, -1, -1})
	visited := w.visited[:0]
	defer func() { w.steps, w.visited = steps, visited }()
	for i := 0; i < len(steps); i++ {
		st := steps[i]
		v := visit{w.key(st.comp), st.offset}
		if slices.Contains(visited, v) {
			continue
		}
		if len(visited) >= maxResolveDepth {
			// Keep every anonymous member seen so the error stays.
			for _, s := range steps[1:] {
				w.touchMember(steps[s.from].comp, s.member)
			}
			return found{}, errors.New("type is nested too deep")
		}
		visited = append(visited, v)

		for j := range st.comp.Vlen {
			m := w.member(st.comp, j)
			if m.Name == name {
				// Keep the path only: drop what the search logged and
				// log the chain of anonymous members down to m.
				w.log = w.log[:mark]
				for s := i; steps[s].from >= 0; s = steps[s].from {
					w.touchMember(steps[steps[s].from].comp, steps[s].member)
					w.logAnonPath(steps[steps[s].from].comp, steps[s].member)
				}
				w.typ(st.comp.side, st.comp.ID)
				w.touchMember(st.comp, j)
				m.BitOffset += st.offset
				return found{parent: st.comp, index: j, member: m, last: j == st.comp.Vlen-1}, nil
			}
			if m.Name != "" {
				continue
			}
			mt, err := w.typ(st.comp.side, m.Type)
			if err != nil {
				return found{}, err
			}
			comp, ok := w.as(mt, isComposite)
			if !ok {
				// Keep every anonymous member seen so the error stays.
				w.log = w.log[:mark]
				for _, s := range steps[1:] {
					w.touchMember(steps[s.from].comp, s.member)
					w.logAnonPath(steps[s.from].comp, s.member)
				}
				w.touchMember(st.comp, j)
				return found{}, fmt.Errorf("anonymous non-composite type %v not allowed", mt.Kind)
			}
			steps = append(steps, memberStep{comp, st.offset + m.BitOffset, i, j})
		}
	}
	return found{}, fmt.Errorf("no matching member %q: %w", name, errImpossible)
}

// logAnonPath logs the typedef/qualifier chain from member idx of comp
// down to the anonymous composite it holds.
func (w *walker) logAnonPath(comp node, idx int) {
	if mt, err := w.typ(comp.side, comp.Member(idx).Type); err == nil {
		w.as(mt, isComposite)
	}
}

// membersCompatible checks that two types may stand for the same field
// (btf's coreAreMembersCompatible).
func (w *walker) membersCompatible(local, target node) error {
	l, t, err := w.underlyingPair(local, target)
	if err != nil {
		return err
	}
	if l.Kind.IsComposite() && t.Kind.IsComposite() {
		return nil
	}
	if class(l.Kind) != class(t.Kind) {
		return fmt.Errorf("type mismatch %v vs %v: %w", l.Kind, t.Kind, errImpossible)
	}
	switch l.Kind {
	case rawbtf.KindArray, rawbtf.KindPtr, rawbtf.KindFloat, rawbtf.KindInt:
		return nil
	case rawbtf.KindEnum, rawbtf.KindEnum64, rawbtf.KindFwd:
		if !essentialNamesMatch(l.Name, t.Name) {
			return fmt.Errorf("names %q and %q don't match: %w", l.Name, t.Name, errImpossible)
		}
		return nil
	}
	return fmt.Errorf("type %v: %w", l.Kind, errNotSupported)
}

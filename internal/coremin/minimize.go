package coremin

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Minimize writes the BTF the relocations of res need: for vmlinux
// (targets[0]) a standalone blob, and for each module target a split blob
// over that minimized vmlinux.
//
// Kept types appear in their original order. Structs and unions keep their
// name, size and kind_flag and only the members some relocation relied on,
// at their original bit offsets and bitfield sizes; enums keep their size
// and signedness and only the enumerators relied on. A pointer or
// prototype parameter whose target is not kept points to void.
//
// A relocation that does not fit a candidate must not fit it in the
// minimized BTF either, if the candidate is there (kept, or the type of
// something kept). For field and enumerator kinds that holds by
// construction; a type mismatch found behind a pointer could vanish when
// the pointer is made to point to void, so Minimize computes those again
// on its output and keeps what they read where the result would change.
func Minimize(res *Result) (vmlinux []byte, modules [][]byte, err error) {
	done := make([]bool, len(res.pending))
	var extra []touch
	for {
		out, err := build(res, extra)
		if err != nil {
			return nil, nil, err
		}
		changed := false
		for i, p := range res.pending {
			if done[i] {
				continue
			}
			fits, err := out.fits(res, p)
			if err != nil {
				return nil, nil, err
			}
			if fits {
				done[i], changed = true, true
				extra = append(extra, p.log...)
			}
		}
		if !changed {
			return out.blobs[0], out.blobs[1:], nil
		}
	}
}

// minimized is one output of build.
type minimized struct {
	blobs  [][]byte // vmlinux, then modules
	specs  []*rawbtf.Spec
	newIDs []map[rawbtf.TypeID]rawbtf.TypeID // per target: old ID -> new ID
}

// fits computes a pending relocation on the minimized BTF and reports
// whether the candidate, if in the output, fits now (or errors), unlike on
// the full BTF.
func (out *minimized) fits(res *Result, p pending) (bool, error) {
	obj := res.Objects[p.ref.obj]
	w := &walker{local: obj.btf, targets: out.specs}
	id, ok := out.newIDs[p.cand.spec][p.cand.id]
	if !ok {
		return false, nil // not in the output: no candidate there
	}
	cand, err := w.typ(p.cand.spec, id)
	if err != nil {
		return false, err
	}
	f, err := w.calcFixup(&obj.Relocations[p.ref.idx], res.targets[0].ByteOrder(), cand)
	return err != nil || !f.failed(), nil
}

// build encodes the marks of res plus extra.
func build(res *Result, extra []touch) (*minimized, error) {
	m := make(marks, len(res.marks))
	for k, tm := range res.marks {
		cp := *tm
		cp.parts = maps.Clone(tm.parts)
		m[k] = &cp
	}
	m.merge(extra)
	if err := m.close(res.targets); err != nil {
		return nil, err
	}

	n := len(res.targets)
	perSpec := make([][]rawbtf.TypeID, n)
	for k := range m {
		perSpec[k.spec] = append(perSpec[k.spec], k.id)
	}
	out := &minimized{
		blobs:  make([][]byte, n),
		specs:  make([]*rawbtf.Spec, n),
		newIDs: make([]map[rawbtf.TypeID]rawbtf.TypeID, n),
	}
	bo := res.targets[0].ByteOrder()
	for i, ids := range perSpec {
		slices.SortFunc(ids, cmp.Compare)
		var base *rawbtf.Spec
		first := rawbtf.TypeID(1)
		if i > 0 {
			// Modules are split over the minimized vmlinux.
			base = out.specs[0]
			first = base.NextID()
		}
		out.newIDs[i] = make(map[rawbtf.TypeID]rawbtf.TypeID, len(ids))
		for j, old := range ids {
			out.newIDs[i][old] = first + rawbtf.TypeID(j)
		}
		blob, err := encode(rawbtf.NewEncoder(bo, base), res.targets, i, ids, m, out.newIDs)
		if err != nil {
			return nil, fmt.Errorf("target %d: %w", i, err)
		}
		spec, err := rawbtf.Parse(blob, base)
		if err != nil {
			return nil, fmt.Errorf("target %d: minimized BTF: %w", i, err)
		}
		out.blobs[i], out.specs[i] = blob, spec
	}
	return out, nil
}

// encode adds the kept types ids of target spec, in order, to enc.
func encode(enc *rawbtf.Encoder, targets []*rawbtf.Spec, spec int, ids []rawbtf.TypeID, m marks, newIDs []map[rawbtf.TypeID]rawbtf.TypeID) ([]byte, error) {
	remap := func(id rawbtf.TypeID) rawbtf.TypeID {
		return newIDs[keyOf(targets, spec, id).spec][id] // 0 (void) if not kept
	}
	for _, id := range ids {
		t, err := targets[spec].Type(id)
		if err != nil {
			return nil, err
		}
		r := t.Record()
		parts := m[key{spec, id}].parts
		switch t.Kind {
		case rawbtf.KindStruct, rawbtf.KindUnion:
			r.Members = keep(r.Members, parts)
		case rawbtf.KindEnum, rawbtf.KindEnum64:
			r.Values = keep(r.Values, parts)
		case rawbtf.KindDatasec:
			r.Vars = slices.DeleteFunc(r.Vars, func(v rawbtf.VarSecinfo) bool {
				return remap(v.Type) == 0
			})
		}
		r.MapRefs(remap)
		if _, err := enc.Add(r); err != nil {
			return nil, fmt.Errorf("type %d: %w", id, err)
		}
	}
	return enc.Bytes(), nil
}

// keep returns the elements of s whose index is in parts, in order.
func keep[T any](s []T, parts map[int]bool) []T {
	out := make([]T, 0, len(parts))
	for i, v := range s {
		if parts[i] {
			out = append(out, v)
		}
	}
	return out
}

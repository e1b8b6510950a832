package corereloc

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
func Minimize(res *Result) (vmlinux []byte, modules [][]byte, err error) {
	m := make(marks, len(res.marks))
	for k, tm := range res.marks {
		cp := *tm
		cp.parts = maps.Clone(tm.parts)
		m[k] = &cp
	}
	if err := m.close(res.Targets); err != nil {
		return nil, nil, err
	}

	perSpec := make([][]rawbtf.TypeID, len(res.Targets))
	for k := range m {
		perSpec[k.spec] = append(perSpec[k.spec], k.id)
	}
	newIDs := make([]map[rawbtf.TypeID]rawbtf.TypeID, len(res.Targets))
	for i, ids := range perSpec {
		slices.SortFunc(ids, cmp.Compare)
		newIDs[i] = make(map[rawbtf.TypeID]rawbtf.TypeID, len(ids))
	}
	bo := res.Targets[0].ByteOrder()

	// vmlinux first: the modules' blobs are split over it.
	for id, old := range perSpec[0] {
		newIDs[0][old] = rawbtf.TypeID(id + 1)
	}
	vmlinux, err = encode(rawbtf.NewEncoder(bo, nil), res.Targets, 0, perSpec[0], m, newIDs)
	if err != nil {
		return nil, nil, fmt.Errorf("vmlinux: %w", err)
	}
	if len(res.Targets) == 1 {
		return vmlinux, nil, nil
	}
	base, err := rawbtf.Parse(vmlinux, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("minimized vmlinux: %w", err)
	}
	for i := 1; i < len(res.Targets); i++ {
		for id, old := range perSpec[i] {
			newIDs[i][old] = base.NextID() + rawbtf.TypeID(id)
		}
		blob, err := encode(rawbtf.NewEncoder(bo, base), res.Targets, i, perSpec[i], m, newIDs)
		if err != nil {
			return nil, nil, fmt.Errorf("module %d: %w", i, err)
		}
		modules = append(modules, blob)
	}
	return vmlinux, modules, nil
}

// encode adds the kept types ids of target spec, in order, to enc.
func encode(enc *rawbtf.Encoder, targets []*rawbtf.Spec, spec int, ids []rawbtf.TypeID, m marks, newIDs []map[rawbtf.TypeID]rawbtf.TypeID) ([]byte, error) {
	remap := func(id rawbtf.TypeID) rawbtf.TypeID {
		s := spec
		if s > 0 && id < targets[s].FirstID() {
			s = 0
		}
		return newIDs[s][id] // 0 (void) if not kept
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
				_, ok := newIDs[spec][v.Type]
				return !ok
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

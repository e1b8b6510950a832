package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Edits per derived kernel.
const (
	swaps    = 8 // pairs of members trading places
	renames  = 4
	enumAdds = 3
	adds     = 2
	removals = 5
)

// derive returns kernel i's raw BTF: src edited as the package doc says.
func derive(src *source, i int) ([]byte, error) {
	rng := rand.New(rand.NewPCG(uint64(i), 0x62746665))
	recs := slices.Clone(src.records)
	edit := func(idx int) *rawbtf.Record {
		r := &recs[idx]
		r.Members = slices.Clone(r.Members)
		r.Values = slices.Clone(r.Values)
		return r
	}
	pickStruct := func() int { return src.structs[rng.IntN(len(src.structs))] }

	if len(src.hot) > 0 && rng.IntN(2) == 0 {
		shiftMembers(edit(src.hot[rng.IntN(len(src.hot))]), rng)
	}
	for range swaps {
		swapMembers(edit(pickStruct()), rng)
	}

	for range renames {
		r := edit(pickStruct())
		m := &r.Members[rng.IntN(len(r.Members))]
		if m.Name != "" {
			m.Name = "__" + m.Name
		}
	}

	for range enumAdds {
		if len(src.enums) == 0 {
			break
		}
		r := edit(src.enums[rng.IntN(len(src.enums))])
		last := r.Values[len(r.Values)-1]
		r.Values = append(r.Values, rawbtf.EnumValue{Name: fmt.Sprintf("%s_BENCH%d", last.Name, i), Value: uint64(uint32(last.Value + 1))})
	}

	// Remove unreferenced types, renumbering the rest.
	removed := map[int]bool{}
	for range removals {
		if len(src.unreferenced) > 0 {
			removed[src.unreferenced[rng.IntN(len(src.unreferenced))]] = true
		}
	}
	newID := make([]rawbtf.TypeID, len(recs)+1)
	next := rawbtf.TypeID(1)
	for idx := range recs {
		if !removed[idx] {
			newID[idx+1] = next
			next++
		}
	}
	enc := rawbtf.NewEncoder(src.bo, nil)
	for idx, r := range recs {
		if removed[idx] {
			continue
		}
		r.MapRefs(func(id rawbtf.TypeID) rawbtf.TypeID { return newID[id] })
		if _, err := enc.Add(r); err != nil {
			return nil, fmt.Errorf("type %d: %w", idx+1, err)
		}
	}
	for j := range adds {
		_, err := enc.Add(rawbtf.Record{
			Kind: rawbtf.KindStruct, Name: fmt.Sprintf("bench_added_%d_%d", i, j), SizeType: 8,
			Members: []rawbtf.Member{
				{Name: "a", Type: newID[src.intID], BitOffset: 0},
				{Name: "b", Type: newID[src.intID], BitOffset: 32},
			},
		})
		if err != nil {
			return nil, err
		}
	}
	return enc.Bytes(), nil
}

// swapMembers makes two members of the same type and no bitfield trade
// places, when the struct has such a pair: their names swap, so the
// members stay in offset order.
func swapMembers(r *rawbtf.Record, rng *rand.Rand) {
	n := len(r.Members)
	start := rng.IntN(n)
	for k := range n {
		a := &r.Members[(start+k)%n]
		if a.BitfieldSize != 0 {
			continue
		}
		for l := k + 1; l < n; l++ {
			b := &r.Members[(start+l)%n]
			if b.Type == a.Type && b.BitfieldSize == 0 {
				a.Name, b.Name = b.Name, a.Name
				return
			}
		}
	}
}

// shiftMembers inserts 8 bytes before a random member, as a new field
// does: the members from there on move, and the struct grows.
func shiftMembers(r *rawbtf.Record, rng *rand.Rand) {
	from := rng.IntN(len(r.Members))
	for j := from; j < len(r.Members); j++ {
		r.Members[j].BitOffset += 64
	}
	r.SizeType += 8
}

package encode

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload"
)

// objects checks and sorts what the payload was generated for, as the
// reader checks it: objects by name, programs by name, each once, every
// name printable.
func objects(in []payload.ObjectRecordDigests) ([]payload.ObjectRecordDigests, error) {
	out := make([]payload.ObjectRecordDigests, len(in))
	for i, o := range in {
		progs := slices.SortedFunc(slices.Values(o.Programs), func(a, b payload.ProgramDigest) int { return cmp.Compare(a.Name, b.Name) })
		if !payload.ValidName(o.Name) || len(progs) == 0 {
			return nil, fmt.Errorf("object %q: no or an unprintable name, or no program", o.Name)
		}
		for j, p := range progs {
			if !payload.ValidName(p.Name) || j > 0 && progs[j-1].Name == p.Name {
				return nil, fmt.Errorf("object %s: program %q: empty, unprintable or repeated", o.Name, p.Name)
			}
		}
		out[i] = payload.ObjectRecordDigests{Name: o.Name, Programs: progs}
	}
	slices.SortFunc(out, func(a, b payload.ObjectRecordDigests) int { return cmp.Compare(a.Name, b.Name) })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("object %s listed twice", out[i].Name)
		}
	}
	return out, nil
}

// families checks and sorts the stable families: each valid, once, of at
// least two members, every member an entry (entries sorted by key).
func families(in []payload.FamilyRecord, entries []Entry) ([]payload.FamilyRecord, error) {
	out := make([]payload.FamilyRecord, len(in))
	for i, f := range in {
		abis := slices.Sorted(slices.Values(f.ABIs))
		if !f.Family.Valid() || len(slices.Compact(slices.Clone(abis))) != len(abis) || len(abis) < 2 {
			return nil, fmt.Errorf("family %s: invalid, or not of two or more distinct members", f.Family)
		}
		for _, abi := range abis {
			key := f.Family.Key(abi)
			if _, ok := slices.BinarySearchFunc(entries, key, func(e Entry, k kernelkey.Key) int { return e.Key.Compare(k) }); !ok {
				return nil, fmt.Errorf("family %s: member %s is not embedded", f.Family, key)
			}
		}
		out[i] = payload.FamilyRecord{Family: f.Family, ABIs: abis}
	}
	slices.SortFunc(out, func(a, b payload.FamilyRecord) int { return a.Family.Compare(b.Family) })
	for i := 1; i < len(out); i++ {
		if out[i].Family == out[i-1].Family {
			return nil, fmt.Errorf("family %s listed twice", out[i].Family)
		}
	}
	return out, nil
}

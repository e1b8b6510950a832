package runtime

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
)

// PruneOptions tunes Prune and LoadAndAssign. A nil *PruneOptions means
// the defaults.
type PruneOptions struct {
	// Unknown removes the programs whose verdict is VerdictUnknown too.
	// By default they stay: the analysis could not tell, and such a
	// program may well load.
	Unknown bool
	// Object is the object spec was read from (Prediction.Object), for
	// the rare payload where spec's program names do not tell: several
	// embedded objects with predictions on this kernel have them all.
	Object string
}

// Prune removes from spec the programs predicted not to load on the
// selected kernel, and returns their predictions, so that the rest loads:
// ebpf.NewCollection fails as a whole when one program fails.
//
// spec is a collection read from an object the payload was generated for
// (bpf2go's loadBpf, or ebpf.LoadCollectionSpec), possibly with programs
// deleted already; Prune tells which object by its program names. A
// spec of an object with no predictions for this kernel, or a Selection
// that is not Predicted (a kernel the payload does not embed, a BTF file
// the user supplied), is left as it is.
//
// What the removed programs leave behind is handled too: a map that only
// they use is removed (a map of a type this kernel lacks would fail
// NewCollection), unless it holds global variables, and program array
// entries that name them are dropped. The struct fields bpf2go generates
// for them are not: see LoadAndAssign.
//
// A spec of an object the payload was not generated for is refused with
// an error wrapping ErrOtherObjects (Check).
func (s *Selection) Prune(spec *ebpf.CollectionSpec, opts *PruneOptions) ([]Prediction, error) {
	if opts == nil {
		opts = &PruneOptions{}
	}
	if err := s.Check(spec); err != nil {
		return nil, err
	}
	object, err := s.objectOf(spec, opts.Object)
	if object == "" || err != nil {
		return nil, err
	}
	var removed []Prediction
	for _, p := range s.Predictions {
		if p.Object != object || spec.Programs[p.Program] == nil || p.Verdict == VerdictUnknown && !opts.Unknown {
			continue
		}
		removed = append(removed, p)
	}
	if len(removed) == 0 {
		return nil, nil
	}
	gone := map[string]bool{}
	for _, p := range removed {
		gone[p.Program] = true
	}
	// Maps the removed programs use and nothing left does.
	used := map[string]bool{}
	for name, prog := range spec.Programs {
		if !gone[name] {
			mapRefs(spec, prog, used)
		}
	}
	for _, m := range spec.Maps {
		for _, kv := range m.Contents {
			if name, ok := kv.Value.(string); ok {
				used[name] = true // a map of maps' inner map
			}
		}
	}
	for _, v := range spec.Variables {
		used[v.SectionName] = true
	}
	orphans := map[string]bool{}
	for name := range gone {
		mapRefs(spec, spec.Programs[name], orphans)
		delete(spec.Programs, name)
	}
	for name := range orphans {
		if !used[name] {
			delete(spec.Maps, name)
		}
	}
	for _, m := range spec.Maps {
		if m.Type == ebpf.ProgramArray {
			// slices.DeleteFunc, written out: its instantiation for
			// MapKV would cost agents 1 KB (docs/performance.md).
			kept := m.Contents[:0]
			for _, kv := range m.Contents {
				if name, ok := kv.Value.(string); !ok || !gone[name] {
					kept = append(kept, kv)
				}
			}
			clear(m.Contents[len(kept):])
			m.Contents = kept
		}
	}
	return removed, nil
}

// mapRefs adds to refs the maps of spec that prog's instructions load.
func mapRefs(spec *ebpf.CollectionSpec, prog *ebpf.ProgramSpec, refs map[string]bool) {
	for _, ins := range prog.Instructions {
		if ref := ins.Reference(); ref != "" && ins.OpCode.IsDWordLoad() && spec.Maps[ref] != nil {
			refs[ref] = true
		}
	}
}

// objectOf is the object of the selection's predictions spec was read
// from: the one named, or the one whose programs include all of spec's;
// "" if there is none.
func (s *Selection) objectOf(spec *ebpf.CollectionSpec, named string) (string, error) {
	if !s.Predicted || len(s.Predictions) == 0 || len(spec.Programs) == 0 {
		return "", nil
	}
	if named != "" {
		if _, ok := s.objects[named]; ok {
			return named, nil
		}
		return "", nil
	}
	var fits []string
	// Keys sorted by hand and programs found with sort.SearchStrings:
	// slices.Sorted(maps.Keys) and slices.BinarySearch, iterators and
	// generic sorting, would cost every agent 10 KB (docs/performance.md).
	names := make([]string, 0, len(s.objects))
	for name := range s.objects {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		programs := s.objects[name]
		all := true
		for p := range spec.Programs {
			i := sort.SearchStrings(programs, p)
			all = all && i < len(programs) && programs[i] == p
		}
		if all {
			fits = append(fits, name)
		}
	}
	if len(fits) > 1 {
		return "", fmt.Errorf("the collection's programs are all in objects %s: set PruneOptions.Object to the one it was read from", strings.Join(fits, ", "))
	}
	if len(fits) == 0 {
		return "", nil
	}
	return fits[0], nil
}

package encode

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/vocab"
)

// Prediction is a program predicted not to load on an entry's kernel, or
// that may not.
type Prediction struct {
	Object  Object
	Program string
	// Verdict is vocab.Fails or vocab.Unknown.
	Verdict vocab.Verdict
	// Kind is what the verdict is about (core, helper, ...); Reasons,
	// at least one, say what.
	Kind    string
	Reasons []string
}

// Object is the object a Prediction is about: its name and the names of
// all its programs, by which the runtime recognizes a collection read from
// it. Every Prediction naming an object must list the same programs.
type Object struct {
	Name     string
	Programs []string
}

// verdicts fills ix.Verdicts and each entry's verdict set from the sorted
// entries: objects sorted by name, rows sorted as the reader checks them,
// every distinct row and set of rows stored once, sets numbered in entry
// order, so the bytes depend only on the entries.
func verdicts(ix *payload.Index, sorted []Entry) error {
	// An object's programs are checked and sorted once per list: a
	// run's predictions share their object's list, and sorting it again
	// for each of them was most of this function's time on the big test
	// object (360 programs, hundreds of predictions per kernel).
	type programs struct{ given, sorted []string }
	objects := map[string]programs{}
	for _, e := range sorted {
		for _, p := range e.Unloadable {
			given := p.Object.Programs
			if old, ok := objects[p.Object.Name]; ok && sameSlice(old.given, given) {
				continue
			}
			progs := slices.Sorted(slices.Values(given))
			if !payload.ValidName(p.Object.Name) || len(progs) == 0 || slices.ContainsFunc(progs, func(p string) bool { return !payload.ValidName(p) }) || len(slices.Compact(slices.Clone(progs))) != len(progs) {
				return fmt.Errorf("entry %s: object %q: no or an unprintable name, or no, empty, unprintable or repeated programs", e.Key, p.Object.Name)
			}
			if old, ok := objects[p.Object.Name]; ok && !slices.Equal(old.sorted, progs) {
				return fmt.Errorf("object %s listed with two sets of programs", p.Object.Name)
			}
			objects[p.Object.Name] = programs{given, progs}
		}
	}
	t := &ix.Verdicts
	objIdx := map[string]uint64{}
	for _, name := range slices.Sorted(maps.Keys(objects)) {
		objIdx[name] = uint64(len(t.Objects))
		t.Objects = append(t.Objects, payload.ObjectRecord{Name: name, Programs: objects[name].sorted})
	}

	// Rows per entry, then every distinct row, sorted.
	type keyed struct {
		payload.RowRecord
		key string
	}
	perEntry := make([][]keyed, len(sorted))
	rowKey := func(r payload.RowRecord) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%d %d %d %q %q", r.Object, r.Program, r.Verdict, r.Kind, r.Reasons)
		return b.String()
	}
	distinct := map[string]payload.RowRecord{}
	for i, e := range sorted {
		seen := map[[2]uint64]bool{}
		for _, p := range e.Unloadable {
			o := objIdx[p.Object.Name]
			prog, ok := slices.BinarySearch(t.Objects[o].Programs, p.Program)
			if !ok {
				return fmt.Errorf("entry %s: program %s is not one of object %s's", e.Key, p.Program, p.Object.Name)
			}
			if p.Verdict != vocab.Fails && p.Verdict != vocab.Unknown {
				return fmt.Errorf("entry %s: %s %s: verdict %d", e.Key, p.Object.Name, p.Program, p.Verdict)
			}
			if !vocab.Kind(p.Kind).Valid() || len(p.Reasons) == 0 {
				return fmt.Errorf("entry %s: %s %s: kind %q (not a reason kind) or no reason", e.Key, p.Object.Name, p.Program, p.Kind)
			}
			id := [2]uint64{o, uint64(prog)}
			if seen[id] {
				return fmt.Errorf("entry %s: two verdicts for %s %s", e.Key, p.Object.Name, p.Program)
			}
			seen[id] = true
			r := payload.RowRecord{Object: o, Program: uint64(prog), Verdict: p.Verdict, Kind: p.Kind, Reasons: p.Reasons}
			k := rowKey(r)
			perEntry[i] = append(perEntry[i], keyed{r, k})
			distinct[k] = r
		}
	}
	t.Rows = slices.SortedFunc(maps.Values(distinct), payload.CompareRows)
	rowIdx := map[string]uint64{}
	for i, r := range t.Rows {
		rowIdx[rowKey(r)] = uint64(i)
	}

	setIdx := map[string]uint64{}
	for i, rows := range perEntry {
		if len(rows) == 0 {
			continue
		}
		set := make([]uint64, len(rows))
		for j, r := range rows {
			set[j] = rowIdx[r.key]
		}
		slices.Sort(set)
		key := fmt.Sprint(set)
		no, ok := setIdx[key]
		if !ok {
			no = uint64(len(t.Sets))
			setIdx[key] = no
			t.Sets = append(t.Sets, set)
		}
		ix.Entries[i].Verdicts = no + 1
	}
	return nil
}

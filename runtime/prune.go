package runtime

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
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
			m.Contents = slices.DeleteFunc(m.Contents, func(kv ebpf.MapKV) bool {
				name, ok := kv.Value.(string)
				return ok && gone[name]
			})
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
	for _, name := range slices.Sorted(maps.Keys(s.objects)) {
		programs := s.objects[name]
		all := true
		for p := range spec.Programs {
			_, ok := slices.BinarySearch(programs, p)
			all = all && ok
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

// LoadAndAssign is ebpf.CollectionSpec.LoadAndAssign for an agent whose
// programs may not all load: it prunes spec (see Prune), loads what
// remains into to, a pointer to a struct like the bpfObjects bpf2go
// generates, and returns the predictions of the programs it removed.
//
// Fields of programs, maps and variables that spec does not hold (Prune
// removed them, or the caller deleted them) are left nil, where
// ebpf.CollectionSpec.LoadAndAssign fails on them: a nil *ebpf.Program
// field means the program is not loaded on this kernel. Every other field
// is assigned by ebpf.CollectionSpec.LoadAndAssign, which also does the
// loading, so its rules and errors hold; loading only what the fields
// ask for, it does not create maps that nothing left uses.
//
// opts is what Assets.CollectionOptions returned for this Selection.
func (s *Selection) LoadAndAssign(spec *ebpf.CollectionSpec, to any, opts *ebpf.CollectionOptions, prune *PruneOptions) ([]Prediction, error) {
	removed, err := s.Prune(spec, prune)
	if err != nil {
		return nil, err
	}
	fields, err := taggedFields(to)
	if err != nil {
		return nil, err
	}
	held := func(t reflect.Type, name string) bool {
		switch t {
		case reflect.TypeFor[*ebpf.Program]():
			return spec.Programs[name] != nil
		case reflect.TypeFor[*ebpf.Map]():
			return spec.Maps[name] != nil
		case reflect.TypeFor[*ebpf.Variable]():
			return spec.Variables[name] != nil
		}
		return true // cilium/ebpf says what is wrong with it
	}
	// The fields to load, in a struct of their own that cilium/ebpf
	// assigns; the others stay nil.
	var kept []reflect.Value
	var sf []reflect.StructField
	names := map[string]bool{}
	for _, f := range fields {
		if !held(f.value.Type(), f.tag) {
			f.value.SetZero()
			continue
		}
		kept = append(kept, f.value)
		name := f.name // as the caller knows it, in cilium/ebpf's errors
		if names[name] || name == "" {
			name = fmt.Sprintf("F%d%s", len(sf), name)
		}
		names[name] = true
		sf = append(sf, reflect.StructField{
			Name: name,
			Type: f.value.Type(),
			Tag:  reflect.StructTag(`ebpf:` + strconv.Quote(f.tag)),
		})
	}
	sub := reflect.New(reflect.StructOf(sf))
	if err := spec.LoadAndAssign(sub.Interface(), opts); err != nil {
		return nil, err
	}
	for i, v := range kept {
		v.Set(sub.Elem().Field(i))
	}
	return removed, nil
}

// taggedField is a settable field of the struct LoadAndAssign fills, with
// its ebpf tag.
type taggedField struct {
	name  string // the field's name, for cilium/ebpf's errors; "" if unexported
	value reflect.Value
	tag   string
}

// taggedFields lists the fields of the struct to points to that carry an
// ebpf tag, in the structs it embeds or points to too, as
// ebpf.CollectionSpec.LoadAndAssign finds them.
func taggedFields(to any) ([]taggedField, error) {
	v := reflect.ValueOf(to)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%T is not a non-nil pointer to a struct", to)
	}
	var out []taggedField
	var walk func(v reflect.Value, depth int) error
	walk = func(v reflect.Value, depth int) error {
		if depth > 16 {
			return fmt.Errorf("%s: structs nested too deep", v.Type())
		}
		t := v.Type()
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			if tag := f.Tag.Get("ebpf"); tag != "" {
				if !fv.CanSet() {
					return fmt.Errorf("field %s: can't set value", f.Name)
				}
				name := f.Name
				if !f.IsExported() {
					name = ""
				}
				out = append(out, taggedField{name, fv, tag})
				continue
			}
			switch {
			case f.Type.Kind() == reflect.Struct:
				if err := walk(fv, depth+1); err != nil {
					return err
				}
			case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
				if fv.IsNil() {
					return fmt.Errorf("field %s: nil pointer to %s", f.Name, f.Type.Elem())
				}
				if err := walk(fv.Elem(), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(v.Elem(), 0)
}

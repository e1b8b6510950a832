package runtime

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/cilium/ebpf"
)

// LoadAndAssign is ebpf.CollectionSpec.LoadAndAssign for an agent whose
// programs may not all load: it prunes spec (see Prune), loads what
// remains into to, a pointer to a struct like the bpfObjects bpf2go
// generates, and returns the predictions of the programs it removed.
//
// Fields of programs, maps and variables that spec does not hold (Prune
// removed them, or the caller deleted them) are left nil, where
// ebpf.CollectionSpec.LoadAndAssign fails on them: a nil *ebpf.Program
// field means the program is not loaded on this kernel. Every other field
// is found and assigned by ebpf.CollectionSpec.LoadAndAssign's rules (ebpf
// tags, in embedded structs and structs pointed to, one field per object)
// and loaded as it loads them: what the fields name and what that needs,
// and nothing else, so a map that nothing left uses is not created, and a
// program array that is loaded for a program but assigned to no field
// must be empty. The loading itself is ebpf.NewCollectionWithOptions on
// that part of spec, so a failure is its error, which names the program
// or map but not the field.
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
	var kept []taggedField
	for _, f := range fields {
		if held(spec, f) {
			kept = append(kept, f)
		} else {
			// Not SetZero, which would cost agents 5 KB: Set and Zero
			// are linked anyway.
			f.value.Set(reflect.Zero(f.value.Type()))
		}
	}
	if opts == nil {
		opts = &ebpf.CollectionOptions{}
	}
	part, partOpts, err := collectionPart(spec, kept, *opts)
	if err != nil {
		return nil, err
	}
	coll, err := ebpf.NewCollectionWithOptions(part, partOpts)
	if err != nil {
		return nil, err
	}
	defer coll.Close() // what no field took: maps only programs use
	for _, f := range kept {
		switch f.value.Type() {
		case programType:
			f.value.Set(reflect.ValueOf(coll.DetachProgram(f.tag)))
		case mapType:
			f.value.Set(reflect.ValueOf(coll.DetachMap(f.tag)))
		case variableType:
			f.value.Set(reflect.ValueOf(coll.Variables[f.tag]))
		}
	}
	return removed, nil
}

var (
	programType  = reflect.TypeFor[*ebpf.Program]()
	mapType      = reflect.TypeFor[*ebpf.Map]()
	variableType = reflect.TypeFor[*ebpf.Variable]()
)

// held says whether spec holds the object of f, a field of one of the
// three types LoadAndAssign assigns; for any other type, it says true,
// and collectionPart refuses the field.
func held(spec *ebpf.CollectionSpec, f taggedField) bool {
	switch f.value.Type() {
	case programType:
		return spec.Programs[f.tag] != nil
	case mapType:
		return spec.Maps[f.tag] != nil
	case variableType:
		return spec.Variables[f.tag] != nil
	}
	return true
}

// collectionPart is the part of spec that ebpf.CollectionSpec.LoadAndAssign
// (cilium/ebpf v0.22, collection.go) loads for fields, whose objects spec
// holds, and the options that load it with ebpf.NewCollectionWithOptions.
// It checks the fields as LoadAndAssign does, with its errors.
//
// The part is what the fields name, the maps its programs' instructions
// load, the programs and maps named by the contents of its program arrays
// and maps of maps, and so on; and every variable of its data sections,
// whose values make up their contents. NewCollectionWithOptions makes a
// Variable of each, so it maps a data section's memory (one mmap) even
// where no field takes a variable of it (bpf2go's objects take them all).
// A program array of the part with contents that no field takes is
// refused, as LoadAndAssign refuses it: the kernel empties it once its
// last descriptor closes, and tail calls through it would miss.
//
// Handing cilium/ebpf's LoadAndAssign a struct of the held fields would
// do the same, but that struct's type must be made at run time with
// reflect.StructOf, whose part of reflect costs an agent 64 KB
// (docs/performance.md).
func collectionPart(spec *ebpf.CollectionSpec, fields []taggedField, opts ebpf.CollectionOptions) (*ebpf.CollectionSpec, ebpf.CollectionOptions, error) {
	p := &partOf{from: spec, CollectionSpec: &ebpf.CollectionSpec{
		Maps:      map[string]*ebpf.MapSpec{},
		Programs:  map[string]*ebpf.ProgramSpec{},
		Variables: map[string]*ebpf.VariableSpec{},
		Types:     spec.Types,
		ByteOrder: spec.ByteOrder,
	}}
	type object struct {
		typ  reflect.Type
		name string
	}
	assigned := map[object]string{}
	for _, f := range fields {
		if strings.Contains(f.tag, ",") {
			return nil, opts, fmt.Errorf("assign values: field %s: ebpf tag contains a comma", f.name)
		}
		o := object{f.value.Type(), f.tag}
		if other, ok := assigned[o]; ok {
			return nil, opts, fmt.Errorf("assign values: field %s: object %q was already assigned to %s", f.name, f.tag, other)
		}
		assigned[o] = f.name
		switch o.typ {
		case programType:
			if spec.Programs[f.tag].Type == ebpf.UnspecifiedProgram {
				return nil, opts, fmt.Errorf("assign values: field %s: cannot load program %s: program type is unspecified", f.name, f.tag)
			}
			p.program(f.tag)
		case mapType:
			p.addMap(f.tag)
		case variableType:
			v := spec.Variables[f.tag]
			p.Variables[f.tag] = v
			p.addMap(v.SectionName)
		default:
			return nil, opts, fmt.Errorf("assign values: field %s: unsupported type %s", f.name, o.typ)
		}
	}
	for name, v := range spec.Variables {
		if p.Maps[v.SectionName] != nil {
			p.Variables[name] = v
		}
	}
	for name, m := range p.Maps {
		_, taken := assigned[object{mapType, name}]
		if storesPrograms(m.Type) && len(m.Contents) > 0 && !taken {
			return nil, opts, fmt.Errorf("ProgramArray %s must be assigned to prevent missed tail calls", name)
		}
	}
	if len(opts.MapReplacements) > 0 {
		replace := map[string]*ebpf.Map{}
		for name, m := range opts.MapReplacements {
			if spec.Maps[name] == nil {
				return nil, opts, fmt.Errorf("replacement map %s not found in CollectionSpec", name)
			}
			if p.Maps[name] != nil {
				replace[name] = m
			}
		}
		opts.MapReplacements = replace
	}
	return p.CollectionSpec, opts, nil
}

// partOf builds the part of from that collectionPart loads.
type partOf struct {
	from *ebpf.CollectionSpec
	*ebpf.CollectionSpec
}

// program adds a program of from and the maps its instructions load, as
// cilium/ebpf's loader links them (a load with a descriptor already in
// the instruction is the caller's). A name from does not hold is left
// out, for NewCollectionWithOptions to refuse as LoadAndAssign would.
func (p *partOf) program(name string) {
	prog := p.from.Programs[name]
	if prog == nil || p.Programs[name] != nil {
		return
	}
	p.Programs[name] = prog
	for i := range prog.Instructions {
		ins := &prog.Instructions[i]
		if ins.IsLoadFromMap() && ins.Reference() != "" && int32(ins.Constant) <= 0 {
			p.addMap(ins.Reference())
		}
	}
}

// addMap adds a map of from and what its contents name: programs of a
// program array, inner maps of a map of maps.
func (p *partOf) addMap(name string) {
	m := p.from.Maps[name]
	if m == nil || p.Maps[name] != nil {
		return
	}
	p.Maps[name] = m
	for _, kv := range m.Contents {
		ref, ok := kv.Value.(string)
		switch {
		case !ok:
		case storesPrograms(m.Type):
			p.program(ref)
		case storesMaps(m.Type):
			p.addMap(ref)
		}
	}
}

// storesPrograms and storesMaps are cilium/ebpf's MapType.canStoreProgram
// and canStoreMap: the maps whose contents name programs or maps.
func storesPrograms(t ebpf.MapType) bool {
	return t == ebpf.ProgramArray || t == ebpf.WindowsProgramArray
}

func storesMaps(t ebpf.MapType) bool {
	return t == ebpf.ArrayOfMaps || t == ebpf.HashOfMaps || t == ebpf.WindowsArrayOfMaps || t == ebpf.WindowsHashOfMaps
}

// taggedField is a settable field of the struct LoadAndAssign fills, with
// its ebpf tag.
type taggedField struct {
	name  string // the field's name, for errors
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
				out = append(out, taggedField{f.Name, fv, tag})
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

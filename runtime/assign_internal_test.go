package runtime

import (
	"errors"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// ciliumObject reads one of cilium/ebpf's own test objects: btf_map_init,
// whose program array prog_array_init holds tail_1 and is used by
// tail_main, and whose map of maps outer_map_init holds inner_map; and
// loader-clang-22, whose xdp_prog uses hash maps and every data section,
// where variables live, and whose static_fn has no program type.
func ciliumObject(tb testing.TB, name string) *ebpf.CollectionSpec {
	tb.Helper()
	// CiliumTestdata is cilium/ebpf's btf/testdata; the loader's objects are one up.
	spec, err := ebpf.LoadCollectionSpec(filepath.Join(kerneltest.CiliumTestdata(tb), "..", "..", "testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return spec
}

type (
	tailMain struct {
		TailMain *ebpf.Program `ebpf:"tail_main"`
	}
	tailMainArray struct {
		tailMain
		ProgArray *ebpf.Map `ebpf:"prog_array_init"`
	}
	outerMap struct {
		Outer *ebpf.Map `ebpf:"outer_map_init"`
	}
	xdpProg struct {
		XDP *ebpf.Program `ebpf:"xdp_prog"`
	}
	rodataVar struct {
		Arg *ebpf.Variable `ebpf:"arg"`
	}
	xdpBss struct {
		xdpProg
		Bss *ebpf.Map `ebpf:".bss"`
	}
	xdpVariable struct {
		xdpProg
		Key2 *ebpf.Variable `ebpf:"key2"`
	}
	untyped struct {
		Static *ebpf.Program `ebpf:"static_fn"`
	}
	twice struct {
		xdpProg
		Again *ebpf.Program `ebpf:"xdp_prog"`
	}
	notAnObject struct {
		Hash *ebpf.MapSpec `ebpf:"hash_map"`
	}
)

// TestCollectionPart checks the part of a collection LoadAndAssign loads
// for a struct against cilium/ebpf v0.22's lazy loader, by its rules: a
// program brings the maps it loads, a program array its programs, a map
// of maps its inner maps, a variable its data section, and a data
// section all its variables.
func TestCollectionPart(t *testing.T) {
	for _, tt := range []struct {
		name, object     string
		to               any
		progs, maps, vas []string
		replace          []string // map replacements asked for
		replaced         []string // the ones kept
		err              string
	}{
		{name: "program array", object: "btf_map_init-el.elf", to: &tailMainArray{},
			progs: []string{"tail_1", "tail_main"}, maps: []string{"prog_array_init"}},
		{name: "program array not assigned", object: "btf_map_init-el.elf", to: &tailMain{},
			err: "ProgramArray prog_array_init must be assigned to prevent missed tail calls"},
		{name: "map of maps", object: "btf_map_init-el.elf", to: &outerMap{},
			maps: []string{"inner_map", "outer_map_init"}},
		{name: "program", object: "loader-clang-22-el.elf", to: &xdpProg{},
			progs: []string{"xdp_prog"},
			maps:  []string{".bss", ".data", ".data.test", ".rodata", ".rodata.test", "hash_map", "hash_map2"},
			vas:   []string{"arg", "arg2", "arg3", "key1", "key2", "key3", "neg", "uneg"}},
		{name: "variable", object: "loader-clang-22-el.elf", to: &rodataVar{},
			maps: []string{".rodata"}, vas: []string{"arg", "key3", "neg", "uneg"}},
		{name: "replacements", object: "loader-clang-22-el.elf", to: &rodataVar{},
			maps: []string{".rodata"}, vas: []string{"arg", "key3", "neg", "uneg"},
			replace: []string{".rodata", "hash_map"}, replaced: []string{".rodata"}},
		{name: "replacement of no map", object: "loader-clang-22-el.elf", to: &rodataVar{},
			replace: []string{"nothing"}, err: "replacement map nothing not found in CollectionSpec"},
		{name: "no program type", object: "loader-clang-22-el.elf", to: &untyped{},
			err: "assign values: field Static: cannot load program static_fn: program type is unspecified"},
		{name: "twice", object: "loader-clang-22-el.elf", to: &twice{},
			err: `assign values: field Again: object "xdp_prog" was already assigned to XDP`},
		{name: "not an object", object: "loader-clang-22-el.elf", to: &notAnObject{},
			err: "assign values: field Hash: unsupported type *ebpf.MapSpec"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := ciliumObject(t, tt.object)
			fields, err := taggedFields(tt.to)
			if err != nil {
				t.Fatal(err)
			}
			var opts ebpf.CollectionOptions
			for _, name := range tt.replace {
				if opts.MapReplacements == nil {
					opts.MapReplacements = map[string]*ebpf.Map{}
				}
				opts.MapReplacements[name] = &ebpf.Map{} // never loaded here
			}
			part, partOpts, err := collectionPart(spec, fields, opts)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{
				{"programs", slices.Sorted(maps.Keys(part.Programs)), tt.progs},
				{"maps", slices.Sorted(maps.Keys(part.Maps)), tt.maps},
				{"variables", slices.Sorted(maps.Keys(part.Variables)), tt.vas},
				{"replacements", slices.Sorted(maps.Keys(partOpts.MapReplacements)), tt.replaced},
			} {
				if len(c.got) != 0 || len(c.want) != 0 {
					if !slices.Equal(c.got, c.want) {
						t.Errorf("%s %v, want %v", c.what, c.got, c.want)
					}
				}
			}
			if part.Types != spec.Types || part.ByteOrder != spec.ByteOrder {
				t.Error("the part lost the collection's types or byte order")
			}
		})
	}
}

// TestLoadAndAssignAsCilium loads structs of cilium/ebpf's test objects
// with cilium/ebpf's LoadAndAssign and with that of a Selection that
// removes nothing, for real: both fail, or both assign every field.
func TestLoadAndAssignAsCilium(t *testing.T) {
	for _, tt := range []struct {
		object string
		to     func() any
	}{
		{"btf_map_init-el.elf", func() any { return &tailMainArray{} }},
		{"btf_map_init-el.elf", func() any { return &tailMain{} }},
		{"btf_map_init-el.elf", func() any { return &outerMap{} }},
		{"loader-clang-22-el.elf", func() any { return &xdpVariable{} }},
	} {
		theirs, ours := tt.to(), tt.to()
		name := reflect.TypeOf(theirs).Elem().Name()
		t.Run(name, func(t *testing.T) {
			errTheirs := ciliumObject(t, tt.object).LoadAndAssign(theirs, nil)
			if errors.Is(errTheirs, unix.EPERM) || errors.Is(errTheirs, ebpf.ErrNotSupported) {
				t.Skipf("bpf() is refused on this machine: %v", errTheirs)
			}
			defer closeFields(t, theirs)
			_, errOurs := (&Selection{}).LoadAndAssign(ciliumObject(t, tt.object), ours, nil, nil)
			defer closeFields(t, ours)
			if (errTheirs == nil) != (errOurs == nil) {
				t.Fatalf("cilium/ebpf: %v; LoadAndAssign: %v", errTheirs, errOurs)
			}
			if errOurs != nil && !strings.Contains(errTheirs.Error(), errOurs.Error()) {
				t.Errorf("LoadAndAssign: %v, cilium/ebpf says %v", errOurs, errTheirs)
			}
			fields, err := taggedFields(ours)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fields {
				if f.value.IsNil() == (errOurs == nil) {
					t.Errorf("field %s: %v after error %v", f.name, f.value, errOurs)
				}
			}
		})
	}
}

// TestLoadAndAssignVariableValues: a value set on a VariableSpec reaches
// its data section even where no field takes the variable, as with
// cilium/ebpf's LoadAndAssign.
func TestLoadAndAssignVariableValues(t *testing.T) {
	spec := ciliumObject(t, "loader-clang-22-el.elf")
	if err := spec.Variables["key1"].Set(uint32(7)); err != nil {
		t.Fatal(err)
	}
	var objs xdpBss
	_, err := (&Selection{}).LoadAndAssign(spec, &objs, nil, nil)
	if errors.Is(err, unix.EPERM) || errors.Is(err, ebpf.ErrNotSupported) {
		t.Skipf("bpf() is refused on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer closeFields(t, &objs)
	var bss uint32
	if err := objs.Bss.Lookup(uint32(0), &bss); err != nil || bss != 7 {
		t.Errorf(".bss holds %d (%v), want key1's 7", bss, err)
	}
}

// closeFields closes the programs and maps assigned to the fields of to.
func closeFields(tb testing.TB, to any) {
	fields, err := taggedFields(to)
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range fields {
		if c, ok := f.value.Interface().(interface{ Close() error }); ok && !f.value.IsNil() {
			c.Close()
		}
	}
}

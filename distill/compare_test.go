package distill_test

import (
	"fmt"
	"reflect"

	"github.com/cilium/ebpf/btf"
)

// comparer checks that relocated split BTF describes the types of the
// original split BTF: same kinds, names, sizes, members, values and
// parameters all the way down. Where the original reaches a named type of
// its base that a distilled base describes by name (int, float, struct,
// union, enum, fwd), the relocated BTF must reach a type of the new base
// with the same name and kind class; with the same base (a round trip) it
// must be the very same type.
type comparer struct {
	origBase, newBase *btf.Spec
	seen              map[[2]btf.Type]bool
}

func newComparer(origBase, newBase *btf.Spec) *comparer {
	return &comparer{origBase: origBase, newBase: newBase, seen: map[[2]btf.Type]bool{}}
}

func inSpec(s *btf.Spec, t btf.Type) bool {
	_, err := s.TypeID(t)
	return err == nil
}

// kindClass groups the kinds relocation may map onto each other.
func kindClass(t btf.Type) string {
	switch t := t.(type) {
	case *btf.Struct:
		return "struct"
	case *btf.Union:
		return "union"
	case *btf.Fwd:
		if t.Kind == btf.FwdUnion {
			return "union"
		}
		return "struct"
	case *btf.Enum:
		return "enum"
	}
	return fmt.Sprintf("%T", t)
}

func namedLeaf(t btf.Type) bool {
	switch t.(type) {
	case *btf.Int, *btf.Float, *btf.Struct, *btf.Union, *btf.Enum, *btf.Fwd:
		return t.TypeName() != ""
	}
	return false
}

func (c *comparer) compare(a, b btf.Type, path string) error {
	if a == b {
		return nil
	}
	key := [2]btf.Type{a, b}
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	if namedLeaf(a) && inSpec(c.origBase, a) {
		if !inSpec(c.newBase, b) {
			return fmt.Errorf("%s: base type %v became %v, outside the new base", path, a, b)
		}
		if c.origBase == c.newBase {
			return fmt.Errorf("%s: base type %v became another base type %v", path, a, b)
		}
		if a.TypeName() != b.TypeName() || kindClass(a) != kindClass(b) {
			return fmt.Errorf("%s: base type %v became %v", path, a, b)
		}
		return nil
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return fmt.Errorf("%s: %v became %v", path, a, b)
	}
	if a.TypeName() != b.TypeName() {
		return fmt.Errorf("%s: name %q became %q", path, a.TypeName(), b.TypeName())
	}
	switch a.(type) {
	case *btf.Int, *btf.Float, *btf.Struct, *btf.Union, *btf.Enum, *btf.Datasec:
		// Kinds that carry their own size; the others take it from the
		// types they refer to, compared below.
		sa, _ := btf.Sizeof(a)
		if sb, _ := btf.Sizeof(b); sa != sb {
			return fmt.Errorf("%s: %v of size %d became %v of size %d", path, a, sa, b, sb)
		}
	}
	switch a := a.(type) {
	case *btf.Void:
		return nil
	case *btf.Int:
		bb := b.(*btf.Int)
		if a.Encoding != bb.Encoding {
			return fmt.Errorf("%s: %v became %v", path, a, bb)
		}
	case *btf.Float:
	case *btf.Fwd:
		if a.Kind != b.(*btf.Fwd).Kind {
			return fmt.Errorf("%s: %v became %v", path, a, b)
		}
	case *btf.Pointer:
		return c.compare(a.Target, b.(*btf.Pointer).Target, path+"*")
	case *btf.Array:
		bb := b.(*btf.Array)
		if a.Nelems != bb.Nelems {
			return fmt.Errorf("%s: %v became %v", path, a, bb)
		}
		if err := c.compare(a.Index, bb.Index, path+"[index]"); err != nil {
			return err
		}
		return c.compare(a.Type, bb.Type, path+"[]")
	case *btf.Struct:
		return c.members(a.Members, b.(*btf.Struct).Members, path)
	case *btf.Union:
		return c.members(a.Members, b.(*btf.Union).Members, path)
	case *btf.Enum:
		bb := b.(*btf.Enum)
		if a.Signed != bb.Signed || !reflect.DeepEqual(a.Values, bb.Values) {
			return fmt.Errorf("%s: values of %v changed", path, a)
		}
	case *btf.Typedef:
		return c.compare(a.Type, b.(*btf.Typedef).Type, path+"/"+a.Name)
	case *btf.Volatile:
		return c.compare(a.Type, b.(*btf.Volatile).Type, path+" volatile")
	case *btf.Const:
		return c.compare(a.Type, b.(*btf.Const).Type, path+" const")
	case *btf.Restrict:
		return c.compare(a.Type, b.(*btf.Restrict).Type, path+" restrict")
	case *btf.TypeTag:
		bb := b.(*btf.TypeTag)
		if a.Value != bb.Value {
			return fmt.Errorf("%s: tag %q became %q", path, a.Value, bb.Value)
		}
		return c.compare(a.Type, bb.Type, path+" tag")
	case *btf.Func:
		bb := b.(*btf.Func)
		if a.Linkage != bb.Linkage || !reflect.DeepEqual(a.Tags, bb.Tags) {
			return fmt.Errorf("%s: %v became %v", path, a, bb)
		}
		return c.compare(a.Type, bb.Type, path+"()")
	case *btf.FuncProto:
		bb := b.(*btf.FuncProto)
		if len(a.Params) != len(bb.Params) {
			return fmt.Errorf("%s: %v became %v", path, a, bb)
		}
		for i := range a.Params {
			if a.Params[i].Name != bb.Params[i].Name {
				return fmt.Errorf("%s: parameter %d %q became %q", path, i, a.Params[i].Name, bb.Params[i].Name)
			}
			if err := c.compare(a.Params[i].Type, bb.Params[i].Type, fmt.Sprintf("%s(%s)", path, a.Params[i].Name)); err != nil {
				return err
			}
		}
		return c.compare(a.Return, bb.Return, path+" return")
	case *btf.Var:
		bb := b.(*btf.Var)
		if a.Linkage != bb.Linkage {
			return fmt.Errorf("%s: %v became %v", path, a, bb)
		}
		return c.compare(a.Type, bb.Type, path+"/"+a.Name)
	case *btf.Datasec:
		bb := b.(*btf.Datasec)
		if len(a.Vars) != len(bb.Vars) {
			return fmt.Errorf("%s: %v became %v", path, a, bb)
		}
		for i := range a.Vars {
			if a.Vars[i].Offset != bb.Vars[i].Offset || a.Vars[i].Size != bb.Vars[i].Size {
				return fmt.Errorf("%s: variable %d moved", path, i)
			}
			if err := c.compare(a.Vars[i].Type, bb.Vars[i].Type, path); err != nil {
				return err
			}
		}
	default:
		// DECL_TAG: cilium/ebpf keeps it unexported, compare by reflection.
		va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
		if va.FieldByName("Value").String() != vb.FieldByName("Value").String() ||
			va.FieldByName("Index").Int() != vb.FieldByName("Index").Int() {
			return fmt.Errorf("%s: %v became %v", path, a, b)
		}
		return c.compare(va.FieldByName("Type").Interface().(btf.Type), vb.FieldByName("Type").Interface().(btf.Type), path+" decl_tag")
	}
	return nil
}

func (c *comparer) members(a, b []btf.Member, path string) error {
	if len(a) != len(b) {
		return fmt.Errorf("%s: %d members became %d", path, len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Offset != b[i].Offset || a[i].BitfieldSize != b[i].BitfieldSize {
			return fmt.Errorf("%s: member %d %q at %d became %q at %d", path, i, a[i].Name, a[i].Offset, b[i].Name, b[i].Offset)
		}
		if err := c.compare(a[i].Type, b[i].Type, path+"."+a[i].Name); err != nil {
			return err
		}
	}
	return nil
}

// sameSplit compares every type of the original split, which starts at
// origFirst, with the type at the same position of the relocated split,
// which starts at relocFirst. The relocated split may be longer: it ends
// with the types Distill copied from the base.
func sameSplit(orig, reloc *btf.Spec, origFirst, relocFirst btf.TypeID, origBase, newBase *btf.Spec) error {
	c := newComparer(origBase, newBase)
	for i := btf.TypeID(0); ; i++ {
		a, errA := orig.TypeByID(origFirst + i)
		if errA != nil {
			if i == 0 {
				return fmt.Errorf("original split has no type %d: %w", origFirst, errA)
			}
			return nil
		}
		b, errB := reloc.TypeByID(relocFirst + i)
		if errB != nil {
			return fmt.Errorf("type %d of the split is missing after relocation: %w", origFirst+i, errB)
		}
		if err := c.compare(a, b, fmt.Sprintf("[%d]%s", origFirst+i, a.TypeName())); err != nil {
			return err
		}
	}
}

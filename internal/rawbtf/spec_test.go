package rawbtf

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// kernels are the testdata kernels and the running kernel's BTF.
func kernels(t *testing.T) []kerneltest.Kernel {
	ks := slices.Clone(kerneltest.Corpus(t))
	if testing.Short() {
		return ks[:1]
	}
	return append(ks, kerneltest.Running(t))
}

// TestParseAgreesWithCilium decodes every type of every real kernel with
// both this package and cilium/ebpf and compares what each says.
func TestParseAgreesWithCilium(t *testing.T) {
	for _, k := range kernels(t) {
		t.Run(k.Name, func(t *testing.T) {
			s, err := Parse(k.BTF, nil)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := btf.LoadSpecFromReader(bytes.NewReader(k.BTF))
			if err != nil {
				t.Fatal(err)
			}
			for id := TypeID(1); id < s.NextID(); id++ {
				got, err := s.Type(id)
				if err != nil {
					t.Fatal(err)
				}
				if got.Kind == KindDeclTag {
					continue // cilium/ebpf keeps decl tags unexported
				}
				typ, err := ref.TypeByID(id)
				if err != nil {
					t.Fatal(err)
				}
				if want := describeCilium(ref, typ); describe(s, got) != want {
					t.Fatalf("type %d:\n got %s\nwant %s", id, describe(s, got), want)
				}
			}
			if _, err := ref.TypeByID(s.NextID()); err == nil {
				t.Fatalf("cilium/ebpf has a type %d past the last one Parse indexed", s.NextID())
			}
		})
	}
}

// describe and describeCilium render the facts both decoders expose in
// one format, so a disagreement shows as a readable diff.
func describe(s *Spec, t Type) string {
	var b bytes.Buffer
	kind := t.Kind
	if kind == KindEnum64 {
		kind = KindEnum // as cilium/ebpf does
	}
	fmt.Fprintf(&b, "%v %q", kind, t.Name)
	switch t.Kind {
	case KindInt:
		e := t.Int()
		fmt.Fprintf(&b, " size=%d enc=%d", t.Size(), e.Encoding)
	case KindStruct, KindUnion:
		fmt.Fprintf(&b, " size=%d", t.Size())
		for i := range t.Vlen {
			m := t.Member(i)
			fmt.Fprintf(&b, " {%q %d %d %d}", m.Name, m.Type, m.BitOffset, m.BitfieldSize)
		}
	case KindEnum, KindEnum64:
		fmt.Fprintf(&b, " size=%d signed=%v", t.Size(), t.Signed())
		for i := range t.Vlen {
			v := t.EnumValue(i)
			fmt.Fprintf(&b, " %s=%d", v.Name, v.Value)
		}
	case KindArray:
		a := t.Array()
		fmt.Fprintf(&b, " %d[%d] idx %d", a.Type, a.Nelems, a.Index)
	case KindFuncProto:
		fmt.Fprintf(&b, " ret %d", t.Ref())
		for i := range t.Vlen {
			p := t.Param(i)
			fmt.Fprintf(&b, " (%q %d)", p.Name, p.Type)
		}
	case KindFloat, KindDatasec:
		fmt.Fprintf(&b, " size=%d", t.Size())
	case KindFwd:
		fmt.Fprintf(&b, " union=%v", t.KindFlag)
	case KindFunc, KindVar:
		fmt.Fprintf(&b, " -> %d linkage %d", t.Ref(), t.Linkage())
	case KindDeclTag:
		fmt.Fprintf(&b, " -> %d idx %d", t.Ref(), t.ComponentIdx())
	default:
		fmt.Fprintf(&b, " -> %d", t.Ref())
	}
	return b.String()
}

func describeCilium(ref *btf.Spec, typ btf.Type) string {
	var b bytes.Buffer
	id := func(t btf.Type) btf.TypeID {
		id, err := ref.TypeID(t)
		if err != nil {
			return 1 << 31
		}
		return id
	}
	switch v := typ.(type) {
	case *btf.Int:
		fmt.Fprintf(&b, "int %q size=%d enc=%d", v.Name, v.Size, v.Encoding)
	case *btf.Struct, *btf.Union:
		k, name, size, members := "struct", "", uint32(0), []btf.Member(nil)
		if s, ok := v.(*btf.Struct); ok {
			name, size, members = s.Name, s.Size, s.Members
		} else {
			u := v.(*btf.Union)
			k, name, size, members = "union", u.Name, u.Size, u.Members
		}
		fmt.Fprintf(&b, "%s %q size=%d", k, name, size)
		for _, m := range members {
			fmt.Fprintf(&b, " {%q %d %d %d}", m.Name, id(m.Type), m.Offset, m.BitfieldSize)
		}
	case *btf.Enum:
		// cilium/ebpf folds ENUM64 into Enum.
		fmt.Fprintf(&b, "enum %q size=%d signed=%v", v.Name, v.Size, v.Signed)
		for _, val := range v.Values {
			fmt.Fprintf(&b, " %s=%d", val.Name, val.Value)
		}
	case *btf.Array:
		fmt.Fprintf(&b, "array %q %d[%d] idx %d", "", id(v.Type), v.Nelems, id(v.Index))
	case *btf.FuncProto:
		fmt.Fprintf(&b, "func_proto %q ret %d", "", id(v.Return))
		for _, p := range v.Params {
			fmt.Fprintf(&b, " (%q %d)", p.Name, id(p.Type))
		}
	case *btf.Float:
		fmt.Fprintf(&b, "float %q size=%d", v.Name, v.Size)
	case *btf.Datasec:
		fmt.Fprintf(&b, "datasec %q size=%d", v.Name, v.Size)
	case *btf.Fwd:
		fmt.Fprintf(&b, "fwd %q union=%v", v.Name, v.Kind == btf.FwdUnion)
	case *btf.Func:
		fmt.Fprintf(&b, "func %q -> %d linkage %d", v.Name, id(v.Type), v.Linkage)
	case *btf.Var:
		fmt.Fprintf(&b, "var %q -> %d linkage %d", v.Name, id(v.Type), v.Linkage)
	case *btf.Pointer:
		fmt.Fprintf(&b, "ptr %q -> %d", "", id(v.Target))
	case *btf.Typedef:
		fmt.Fprintf(&b, "typedef %q -> %d", v.Name, id(v.Type))
	case *btf.Const:
		fmt.Fprintf(&b, "const %q -> %d", "", id(v.Type))
	case *btf.Volatile:
		fmt.Fprintf(&b, "volatile %q -> %d", "", id(v.Type))
	case *btf.Restrict:
		fmt.Fprintf(&b, "restrict %q -> %d", "", id(v.Type))
	case *btf.TypeTag:
		fmt.Fprintf(&b, "type_tag %q -> %d", v.Value, id(v.Type))
	default:
		fmt.Fprintf(&b, "%T", typ)
	}
	return b.String()
}

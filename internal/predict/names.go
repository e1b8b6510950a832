package predict

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/corereloc"
)

// describe names a relocation the way a person reads it:
// "byte_off task_struct.mm_cid", "enumval_value bpf_prog_type::BPF_PROG_TYPE_NETFILTER",
// "type_size struct btfembed_missing". The path is walked in the
// object's own BTF (local), where the accessor indexes point; flavour
// suffixes (___old) are kept, since they are what the source says.
func describe(relo *corereloc.Relocation, local *btf.Spec) string {
	s := relo.String()
	if local == nil {
		return s
	}
	typ, err := local.TypeByID(relo.TypeID)
	if err != nil {
		return s
	}
	typ = skipCV(typ)
	var idx []int
	for _, part := range strings.Split(relo.Access, ":") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return s
		}
		idx = append(idx, n)
	}
	kind := relo.Kind.String()
	switch {
	case relo.Kind == corereloc.EnumvalExists || relo.Kind == corereloc.EnumvalValue:
		if e, ok := skipQualifiers(typ).(*btf.Enum); ok && len(idx) == 1 && idx[0] < len(e.Values) {
			return fmt.Sprintf("%s %s::%s", kind, e.Name, e.Values[idx[0]].Name)
		}
	case relo.Kind >= corereloc.TypeIDLocal:
		return fmt.Sprintf("%s %s", kind, typeName(typ))
	default:
		return fmt.Sprintf("%s %s", kind, fieldPath(typ, idx))
	}
	return s
}

// fieldPath renders an access path: the first index steps over the
// pointer (shown only when not 0), then members by name and array
// elements by index. Anonymous members add no name.
func fieldPath(typ btf.Type, idx []int) string {
	var b strings.Builder
	b.WriteString(typ.TypeName())
	typ = skipQualifiers(typ)
	if b.Len() == 0 {
		b.WriteString(typeName(typ))
	}
	if len(idx) == 0 {
		return b.String()
	}
	if idx[0] != 0 {
		fmt.Fprintf(&b, "[%d]", idx[0])
	}
	for _, i := range idx[1:] {
		var members []btf.Member
		switch t := typ.(type) {
		case *btf.Struct:
			members = t.Members
		case *btf.Union:
			members = t.Members
		case *btf.Array:
			fmt.Fprintf(&b, "[%d]", i)
			typ = skipQualifiers(t.Type)
			continue
		default:
			fmt.Fprintf(&b, ":%d", i)
			continue
		}
		if i >= len(members) {
			fmt.Fprintf(&b, ":%d", i)
			continue
		}
		if name := members[i].Name; name != "" {
			b.WriteString("." + name)
		}
		typ = skipQualifiers(members[i].Type)
	}
	return b.String()
}

// typeName is "struct task_struct", "enum pid_type", "typedef pid_t".
func typeName(typ btf.Type) string {
	var kind string
	switch typ.(type) {
	case *btf.Struct:
		kind = "struct"
	case *btf.Union:
		kind = "union"
	case *btf.Enum:
		kind = "enum"
	case *btf.Typedef:
		kind = "typedef"
	case *btf.Fwd:
		kind = "fwd"
	}
	name := typ.TypeName()
	if name == "" {
		name = "(anon)"
	}
	if kind == "" {
		return name
	}
	return kind + " " + name
}

// skipQualifiers strips const, volatile, restrict, type tags and
// typedefs, as the access path does.
func skipQualifiers(typ btf.Type) btf.Type {
	for range 32 { // a bound against malformed cycles
		if t, ok := typ.(*btf.Typedef); ok {
			typ = t.Type
			continue
		}
		if next := skipCV(typ); next != typ {
			typ = next
			continue
		}
		return typ
	}
	return typ
}

// skipCV strips const, volatile, restrict and type tags, keeping a
// typedef, whose name is what the source says.
func skipCV(typ btf.Type) btf.Type {
	for range 32 {
		switch t := typ.(type) {
		case *btf.Const:
			typ = t.Type
		case *btf.Volatile:
			typ = t.Type
		case *btf.Restrict:
			typ = t.Type
		case *btf.TypeTag:
			typ = t.Type
		default:
			return typ
		}
	}
	return typ
}

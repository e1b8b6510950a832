package coremin

import (
	"fmt"
	"strings"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Describe names relocation r of o the way a person reads it, and the
// way the load prediction's reasons name it: "byte_off task_struct.mm_cid",
// "enumval_value bpf_prog_type::BPF_PROG_TYPE_NETFILTER",
// "type_size task_struct". The access path is walked in the object's own
// BTF, where its indexes point; flavour suffixes (___old) are kept, since
// they are what the source says. Where the BTF does not hold what the
// path names, the raw access string stands in for the rest. Each
// relocation is described once and the text kept.
func (o *Object) Describe(r *Relocation) string {
	if d, ok := o.memo.described.Load(r); ok {
		return d.(string)
	}
	d := o.describe(r)
	o.memo.described.Store(r, d)
	return d
}

func (o *Object) describe(r *Relocation) string {
	name := r.TypeName
	if name == "" {
		name = "(anon)"
	}
	raw := fmt.Sprintf("%s %s [%s]", r.Kind, name, r.Access)
	if o.btf == nil {
		return raw
	}
	t, err := o.btf.Type(r.TypeID)
	if err != nil {
		return raw
	}
	switch {
	case r.Kind.isEnumval():
		t = o.skipQualifiers(t)
		if len(r.accessor) == 1 && t.Kind.IsEnum() && r.accessor[0] < t.Vlen {
			return fmt.Sprintf("%s %s::%s", r.Kind, name, t.EnumValue(r.accessor[0]).Name)
		}
		return raw
	case !r.Kind.isField():
		return fmt.Sprintf("%s %s%s", r.Kind, kindWord(t.Kind), name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Kind, name)
	if len(r.accessor) == 0 {
		return b.String()
	}
	if r.accessor[0] != 0 {
		fmt.Fprintf(&b, "[%d]", r.accessor[0])
	}
	t = o.skipQualifiers(t)
	for _, i := range r.accessor[1:] {
		switch {
		case t.Kind == rawbtf.KindArray:
			fmt.Fprintf(&b, "[%d]", i)
			next, err := o.btf.Type(t.Array().Type)
			if err != nil {
				return raw
			}
			t = o.skipQualifiers(next)
		case t.Kind.IsComposite() && i < t.Vlen:
			m := t.Member(i)
			if m.Name != "" { // anonymous members add no name
				b.WriteString("." + m.Name)
			}
			next, err := o.btf.Type(m.Type)
			if err != nil {
				return raw
			}
			t = o.skipQualifiers(next)
		default:
			fmt.Fprintf(&b, ":%d", i)
		}
	}
	return b.String()
}

// kindWord is the C keyword before a type's name: "struct task_struct".
func kindWord(k rawbtf.Kind) string {
	switch k {
	case rawbtf.KindStruct:
		return "struct "
	case rawbtf.KindUnion:
		return "union "
	case rawbtf.KindEnum, rawbtf.KindEnum64:
		return "enum "
	case rawbtf.KindTypedef:
		return "typedef "
	}
	return ""
}

// skipQualifiers follows typedefs and qualifiers (at most a bounded
// number, as malformed BTF may loop) to the type they name.
func (o *Object) skipQualifiers(t rawbtf.Type) rawbtf.Type {
	for range 32 {
		if t.Kind != rawbtf.KindTypedef && !t.Kind.IsQualifier() {
			return t
		}
		next, err := o.btf.Type(t.Ref())
		if err != nil {
			return t
		}
		t = next
	}
	return t
}

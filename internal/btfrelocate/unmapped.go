package btfrelocate

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// UnmappedError is Relocate's error when distilled base types have no
// single match in the new base. It lists every such type.
type UnmappedError struct {
	Types []Unmapped
	Total int // types in the distilled base
	// LayoutCompatible reports that Options.LayoutCompatible would
	// have mapped every type; false when that mode was on.
	LayoutCompatible bool
}

// Unmapped is one distilled base type Relocate could not map.
type Unmapped struct {
	ID       btf.TypeID // in the distilled base
	Type     string     // kind, name and what the match depends on: "int 'char' size=1 encoding=signed"
	Embedded bool       // the split embeds it, so its size must match
	// LayoutCompatible reports that layout-compatible mode maps the type.
	LayoutCompatible bool
	Reason           string // which new-base types were considered and why none fits
}

func (u Unmapped) String() string {
	emb := ""
	if u.Embedded {
		emb = " embedded"
	}
	return fmt.Sprintf("%s%s [%d]: %s", u.Type, emb, u.ID, u.Reason)
}

func (e *UnmappedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d distilled base types do not map onto the new base", len(e.Types), e.Total)
	if e.LayoutCompatible {
		b.WriteString(" (layout-compatible mode would map them all)")
	}
	for i, u := range e.Types {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(u.String())
	}
	return b.String()
}

// Describe names a type by what relocation matches it on.
func Describe(t rawbtf.Type) string {
	switch t.Kind {
	case rawbtf.KindInt:
		return fmt.Sprintf("int '%s' size=%d encoding=%s", t.Name, t.Size(), encodingString(t.Int().Encoding))
	case rawbtf.KindFwd:
		if t.KindFlag {
			return fmt.Sprintf("fwd union '%s'", t.Name)
		}
		return fmt.Sprintf("fwd struct '%s'", t.Name)
	case rawbtf.KindFloat, rawbtf.KindStruct, rawbtf.KindUnion, rawbtf.KindEnum, rawbtf.KindEnum64:
		return fmt.Sprintf("%v '%s' size=%d", t.Kind, t.Name, t.Size())
	}
	return fmt.Sprintf("%v '%s'", t.Kind, t.Name)
}

func encodingString(e uint8) string {
	if e == 0 {
		return "none"
	}
	var parts []string
	for _, f := range []struct {
		bit  uint8
		name string
	}{{rawbtf.IntSigned, "signed"}, {rawbtf.IntChar, "char"}, {rawbtf.IntBool, "bool"}} {
		if e&f.bit != 0 {
			parts = append(parts, f.name)
			e &^= f.bit
		}
	}
	if e != 0 {
		parts = append(parts, fmt.Sprintf("%#x", e))
	}
	return strings.Join(parts, "|")
}

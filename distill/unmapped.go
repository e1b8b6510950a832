package distill

import (
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/btfrelocate"
)

// UnmappedError is Relocate's error when distilled base types have no
// single match in the new base. It lists every such type.
type UnmappedError struct {
	Types []Unmapped
	Total int // types in the distilled base
	// LayoutCompatible reports that RelocateOptions.LayoutCompatible would
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

// The messages are the relocation's own, one definition for both.

func (u Unmapped) String() string { return btfrelocate.Unmapped(u).String() }

func (e *UnmappedError) Error() string {
	in := &btfrelocate.UnmappedError{Total: e.Total, LayoutCompatible: e.LayoutCompatible}
	for _, u := range e.Types {
		in.Types = append(in.Types, btfrelocate.Unmapped(u))
	}
	return in.Error()
}

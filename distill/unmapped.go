package distill

import "github.com/btfembed/btfembed/internal/btfrelocate"

// UnmappedError is Relocate's error when distilled base types have no
// single match in the new base. It lists every such type.
type UnmappedError struct {
	err *btfrelocate.UnmappedError
}

func (e *UnmappedError) Error() string { return e.err.Error() }

// Types describes each distilled base type that does not map: its kind,
// name and what the match depends on, whether the split embeds it, and
// which new-base types were considered and why none fits.
func (e *UnmappedError) Types() []string {
	types := make([]string, len(e.err.Types))
	for i, u := range e.err.Types {
		types[i] = u.String()
	}
	return types
}

// Total is the number of types in the distilled base.
func (e *UnmappedError) Total() int { return e.err.Total }

// LayoutCompatible reports that RelocateOptions.LayoutCompatible would
// have mapped every type; false when that mode was on.
func (e *UnmappedError) LayoutCompatible() bool { return e.err.LayoutCompatible }

package generator

import (
	"path/filepath"
	"slices"
	"strings"
)

// source is a program as the user wrote it. bpf2go compiles one C file
// into one object per target (bpf_x86_bpfel.o, bpf_arm64_bpfel.o), each
// holding the same programs and each checked only on the kernels of its
// architecture, so the report counts and lists such a program once for
// all of them.
type source struct {
	stem    string // the objects' path without bpf2go's target suffix
	program string
}

func sourceOf(p ProgramReport) source { return source{objectStem(p.Object), p.Program} }

// objectStem is an object's path without ".o" and the suffix bpf2go adds
// per target: _<linux arch>_<bpfel|bpfeb> or _<bpfel|bpfeb>. Objects not
// named by bpf2go are their own stem.
func objectStem(object string) string {
	dir, base := filepath.Split(object)
	stem, ok := strings.CutSuffix(base, ".o")
	if !ok {
		return object
	}
	endian := false
	for _, e := range []string{"_bpfel", "_bpfeb"} {
		if s, ok := strings.CutSuffix(stem, e); ok {
			stem, endian = s, true
		}
	}
	if !endian {
		return object
	}
	if i := strings.LastIndexByte(stem, '_'); i >= 0 && bpf2goArches[stem[i+1:]] != nil {
		stem = stem[:i]
	}
	return dir + stem
}

// sourceObjects lists, for each source of the report's programs, the
// objects that hold it, sorted and joined with commas: the OBJECT column
// of the program table.
func (r *Report) sourceObjects() map[source]string {
	objs := map[source][]string{}
	for _, k := range r.Kernels {
		for _, p := range k.Programs {
			s := sourceOf(p)
			if !slices.Contains(objs[s], p.Object) {
				objs[s] = append(objs[s], p.Object)
			}
		}
	}
	names := make(map[source]string, len(objs))
	for s, o := range objs {
		slices.Sort(o)
		names[s] = strings.Join(o, ",")
	}
	return names
}

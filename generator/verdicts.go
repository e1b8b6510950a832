package generator

import (
	"path/filepath"
	"slices"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/vocab"
)

// withVerdicts sets each entry's Unloadable from the report's prediction
// for its kernel (entries[i] is report.Kernels[i]'s): the programs that
// fail or may fail, with their reasons, so that the runtime can skip them.
// An object is named by its file's base name, as bpf2go's generated code
// embeds it, or as given where two objects share a base name.
//
// Kernels with the same rows share one list (sharer), and their entries
// one Unloadable: made kernel by kernel, a merged part's shared list of a
// million failing rows took memory for every kernel referring to it.
func withVerdicts(entries []encode.Entry, report *Report) {
	names := objectNames(report.Objects)
	// A list is known by its first row's address and its length.
	type key struct {
		first *ProgramReport
		n     int
	}
	keyOf := func(rows []ProgramReport) key {
		if len(rows) == 0 {
			return key{}
		}
		return key{&rows[0], len(rows)}
	}
	var lists [][]ProgramReport
	seen := map[key]bool{}
	for _, k := range report.Kernels {
		if l := keyOf(k.Programs); l.n > 0 && !seen[l] {
			seen[l] = true
			lists = append(lists, k.Programs)
		}
	}
	programs := map[string][]string{}
	known := map[[2]string]bool{}
	for _, l := range lists {
		for _, p := range l {
			if !known[[2]string{p.Object, p.Program}] {
				known[[2]string{p.Object, p.Program}] = true
				programs[p.Object] = append(programs[p.Object], p.Program)
			}
		}
	}
	for o, progs := range programs {
		slices.Sort(progs)
		programs[o] = progs
	}
	unloadable := map[key][]encode.Prediction{}
	for _, l := range lists {
		var preds []encode.Prediction
		for _, p := range l {
			// Programs that load have no row (and rows hold no other
			// word: vocabulary checks those read from parts).
			v, ok := vocab.ParseVerdict(p.Verdict)
			if !ok || v == vocab.Loads {
				continue
			}
			preds = append(preds, encode.Prediction{
				Object:  encode.Object{Name: names[p.Object], Programs: programs[p.Object]},
				Program: p.Program,
				Verdict: v,
				Kind:    kind(p),
				Reasons: reasons(p),
			})
		}
		unloadable[keyOf(l)] = preds
	}
	for i, k := range report.Kernels {
		entries[i].Unloadable = unloadable[keyOf(k.Programs)]
	}
}

// kind is what p's verdict is about (ProgramReport.Reason), "core" for a
// report that does not say (one read from a part or cache of a version
// that did not record it).
func kind(p ProgramReport) string {
	if p.Reason == "" {
		return string(vocab.KindCORE)
	}
	return p.Reason
}

// reasons are p's reasons; a verdict without one (none is written so
// today) still gets one, so that the runtime always has something to log.
func reasons(p ProgramReport) []string {
	if len(p.Reasons) == 0 {
		return []string{p.Verdict}
	}
	return p.Reasons
}

// objectNames maps each object as given to its name in the payload: its
// base name, unless another object has the same one.
func objectNames(objects []string) map[string]string {
	count := map[string]int{}
	for _, o := range objects {
		count[filepath.Base(o)]++
	}
	names := map[string]string{}
	for _, o := range objects {
		names[o] = filepath.Base(o)
		if count[filepath.Base(o)] > 1 {
			names[o] = filepath.ToSlash(o)
		}
	}
	return names
}

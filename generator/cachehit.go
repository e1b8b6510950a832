package generator

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"slices"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/predict"
	"github.com/btfembed/btfembed/internal/vocab"
)

// cachedResult is a kernel's result as stored, for a relocation set:
// nothing in it names an object. Besides the blobs, it holds what the
// report rows and the load predictions of any objects with these groups
// need from the full BTF, by the names relocationSet gives:
//
//   - Outcomes: Match's outcome per relocation of a group, from functions
//     where nothing failed; Functions: the outcomes of a function where
//     something failed (Match then fails the whole function, naming it);
//   - Verified: the cilium/ebpf groups of programs btf.CORERelocate
//     relocated, whose fixups the oracle found equal on the minimized
//     BTF, so predictions computed against that BTF hold; TypeIDs: the
//     full BTF's kernel type ID of their target_type_id relocations,
//     which the minimized BTF numbers otherwise; Refused: the reasons of
//     a program btf.CORERelocate refused, by its groups; Facts: what the
//     predictions beyond CO-RE need (helpers, map types, kfuncs asked
//     about...): a result whose facts were not asked about every kfunc
//     the objects call is not used.
type cachedResult struct {
	Key           kernelkey.Key // as reading completed it
	VMLinux       []byte
	Types, Bytes  int
	Modules       []cachedModule
	ModuleReports []ModuleReport

	Outcomes  map[string]cachedOutcome
	Functions map[string][]cachedOutcome
	Verified  map[string]bool
	TypeIDs   map[string]uint64
	Refused   map[string][]string
	// Facts are what the full BTF says beyond CO-RE, for the
	// prediction (predict.NewKernel).
	Facts *predict.Kernel
}

type cachedModule struct {
	Name        string
	Base, Split []byte
}

// cachedOutcome is what the report rows say of a relocation.
type cachedOutcome struct {
	Unresolved     bool // a row of KernelReport.Unresolved
	Status, Reason string
	KernelTypeID   bool // a row of KernelReport.KernelTypeIDs
}

// newCachedOutcome is what the rows say of site j of res.Objects[i].
func newCachedOutcome(res *coremin.Result, i, j int) cachedOutcome {
	out := res.Outcome(i, j)
	c := cachedOutcome{
		Unresolved:   out.Status != coremin.Resolved,
		Status:       statusWord(out),
		KernelTypeID: res.KernelTypeID(i, j),
	}
	if out.Err != nil {
		c.Reason = out.Err.Error()
	}
	return c
}

// fill records what processing o computed against the full BTF. It
// reports false if a name meant two things: then the result is not kept.
func (cr *cachedResult) fill(o *objects, set *relocationSet, kr *kernelResult) bool {
	cr.Outcomes, cr.Functions = map[string]cachedOutcome{}, map[string][]cachedOutcome{}
	cr.Verified, cr.TypeIDs, cr.Refused = map[string]bool{}, map[string]uint64{}, map[string][]string{}
	cr.Facts = kr.facts
	for i, obj := range o.relos {
		failed := map[string]bool{}
		for j := range obj.Sites {
			if st := kr.match.Outcome(i, j).Status; st == coremin.Failed || st == coremin.Ambiguous {
				failed[set.function[i][j]] = true
			}
		}
		functions := map[string][]cachedOutcome{}
		for j := range obj.Sites {
			c := newCachedOutcome(kr.match, i, j)
			if fn := set.function[i][j]; failed[fn] {
				functions[fn] = append(functions[fn], c)
				continue
			}
			key := set.outcome[i][j]
			if prev, ok := cr.Outcomes[key]; ok && prev != c {
				return false
			}
			cr.Outcomes[key] = c
		}
		for fn, outs := range functions {
			if prev, ok := cr.Functions[fn]; ok && !slices.Equal(prev, outs) {
				return false
			}
			cr.Functions[fn] = outs
		}
		for _, p := range kr.rows[i].Programs {
			if kr.unrelocated[i][p.Program] {
				key := set.program[i][p.Program]
				if prev, ok := cr.Refused[key]; ok && !slices.Equal(prev, p.Reasons) {
					return false
				}
				cr.Refused[key] = p.Reasons
				continue
			}
			for _, g := range set.groups[i][p.Program] {
				cr.Verified[g] = true
			}
			for insn, key := range set.typeID[i][p.Program] {
				id, ok := kr.typeIDs[i][p.Program][insn]
				if !ok {
					continue // poisoned: so is every relocation of the name
				}
				if prev, seen := cr.TypeIDs[key]; seen && prev != id {
					return false
				}
				cr.TypeIDs[key] = id
			}
		}
	}
	return true
}

// fromCache rebuilds, from a cached result of the same relocation set, a
// kernel's result for o: the blobs as cached, the report rows of o's
// relocations from their groups' outcomes, and the load predictions of
// o's programs against the cached minimized BTF with the full BTF's
// kernel type IDs. An error (a damaged entry, a relocation or program the
// entry cannot answer for) makes the kernel a miss.
func (o *objects) fromCache(data []byte, set *relocationSet, path string) (*kernelResult, error) {
	var cr cachedResult
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&cr); err != nil {
		return nil, err
	}
	if cr.Facts == nil {
		return nil, fmt.Errorf("no kernel facts cached")
	}
	for _, name := range o.kfuncs {
		if !slices.Contains(cr.Facts.Asked, name) {
			return nil, fmt.Errorf("the cached kernel facts do not say whether the kernel has kfunc %s", name)
		}
	}
	rows := make([]objectRows, len(o.names))
	for i, obj := range o.relos {
		at := map[string]int{} // next outcome of a failed function
		for j := range obj.Sites {
			c, ok := cr.Outcomes[set.outcome[i][j]]
			if outs, failed := cr.Functions[set.function[i][j]]; failed {
				n := at[set.function[i][j]]
				at[set.function[i][j]]++
				c, ok = cachedOutcome{}, n < len(outs)
				if ok {
					c = outs[n]
				}
			}
			if !ok {
				return nil, fmt.Errorf("no cached outcome for %s", obj.SiteString(j))
			}
			rows[i].add(o.names[i], obj, j, c)
		}
	}

	typeIDs := make([]map[string]map[int]uint64, len(o.names))
	refused := make([]map[string][]string, len(o.names))
	for i, coll := range o.colls {
		typeIDs[i], refused[i] = map[string]map[int]uint64{}, map[string][]string{}
		for prog := range coll.Programs {
			if reasons, ok := cr.Refused[set.program[i][prog]]; ok {
				refused[i][prog] = reasons
				continue
			}
			for _, g := range set.groups[i][prog] {
				if !cr.Verified[g] {
					return nil, fmt.Errorf("%s: program %s: a relocation group the oracle did not check", o.names[i], prog)
				}
			}
			// A relocation without a cached ID was poisoned on the full
			// BTF, so it is on the minimized BTF: the oracle checked.
			ids := map[int]uint64{}
			for insn, key := range set.typeID[i][prog] {
				if id, ok := cr.TypeIDs[key]; ok {
					ids[insn] = id
				}
			}
			typeIDs[i][prog] = ids
		}
	}

	kr := &kernelResult{entry: encode.Entry{Key: cr.Key, VMLinux: cr.VMLinux}}
	for _, m := range cr.Modules {
		kr.entry.Modules = append(kr.entry.Modules, encode.Module{Name: m.Name, Base: m.Base, Split: m.Split})
	}
	targets, err := minimizedTargets(&kr.entry)
	if err != nil {
		return nil, err
	}
	// The fixups on the minimized BTF, which the oracle proved equal to
	// those on the full BTF: asked once, for the prediction and the
	// report's digest.
	oracle, err := o.oracle()
	if err != nil {
		return nil, err
	}
	answers, err := oracle.Relocate(targets, nil)
	if err != nil {
		return nil, err
	}
	_, unrelocated := o.predict(cr.Key, targets, cr.Facts, rows, typeIDs, answers)
	for i := range rows {
		for k, p := range rows[i].Programs {
			switch reasons, ok := refused[i][p.Program]; {
			case ok:
				// As cilium/ebpf refused it against the full BTF.
				rows[i].Programs[k] = ProgramReport{Object: p.Object, Program: p.Program, Verdict: vocab.Fails.String(), Reason: string(vocab.KindCORE), Reasons: reasons}
			case unrelocated[i][p.Program]:
				return nil, fmt.Errorf("%s: program %s does not relocate on the minimized BTF", o.names[i], p.Program)
			}
		}
	}
	kr.rows = rows
	kr.report = report(cr.Key, path, o.names, cr.Types, cr.Bytes, rows)
	kr.report.Modules = cr.ModuleReports
	kr.report.Fixups = answers.FixupDigest()
	return kr, nil
}

package generator

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/btfdistill"
	"github.com/btfembed/btfembed/internal/btfload"
	"github.com/btfembed/btfembed/internal/btfrelocate"
	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/predict"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/relodigest"
)

// objects holds what every kernel is processed against, loaded once and
// shared read-only by the workers.
type objects struct {
	names  []string               // the objects as the user named them
	relos  []*coremin.Object      // relocations, for matching
	colls  []*ebpf.CollectionSpec // programs, for the oracle
	kfuncs []string               // the kfuncs the programs call, for the prediction
	memos  []*predict.Memo        // per object, its predictions across kernels
	// digests are each object's programs' relocation digests, which the
	// payload records for the runtime to check collections against.
	digests []map[string]relodigest.Digest
	// oracle asks the objects' relocations of cilium/ebpf, made once
	// for every kernel.
	oracle func() (*coremin.Oracle, error)
}

// digestsByName are the objects' programs' relocation digests, by the
// object as the user named it.
func (o *objects) digestsByName() map[string]map[string]relodigest.Digest {
	digests := map[string]map[string]relodigest.Digest{}
	for i, name := range o.names {
		digests[name] = o.digests[i]
	}
	return digests
}

func loadObjects(paths []string) (*objects, error) {
	relos, err := coremin.Load(paths...)
	if err != nil {
		return nil, err
	}
	o := &objects{names: paths, relos: relos}
	for _, obj := range relos {
		coll, err := obj.Collection()
		if err != nil {
			return nil, err
		}
		digests, err := relodigest.Programs(coll)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", obj.Path, err)
		}
		o.colls = append(o.colls, coll)
		o.digests = append(o.digests, digests)
		o.memos = append(o.memos, predict.NewMemo())
		o.kfuncs = append(o.kfuncs, predict.Kfuncs(coll)...)
	}
	o.oracle = sync.OnceValues(func() (*coremin.Oracle, error) { return coremin.NewOracle(o.relos) })
	return o, nil
}

// subset is the objects at the indices, sharing what is loaded (and
// asking about all the objects' kfuncs).
func (o *objects) subset(indices []int) *objects {
	s := &objects{kfuncs: o.kfuncs}
	for _, i := range indices {
		s.names = append(s.names, o.names[i])
		s.relos = append(s.relos, o.relos[i])
		s.colls = append(s.colls, o.colls[i])
		s.digests = append(s.digests, o.digests[i])
		s.memos = append(s.memos, o.memos[i])
	}
	s.oracle = sync.OnceValues(func() (*coremin.Oracle, error) { return coremin.NewOracle(s.relos) })
	return s
}

// kernelResult is one kernel's embedded entry and its report.
type kernelResult struct {
	entry  encode.Entry
	report KernelReport
	rows   []objectRows // the report's rows, object by object

	// For the cache only, from processing: Match's result (its
	// outcomes), and per object the kernel type IDs of target_type_id
	// relocations by program and instruction, and the programs
	// btf.CORERelocate refused. processCached drops them.
	match       *coremin.Result
	typeIDs     []map[string]map[int]uint64
	unrelocated []map[string]bool
	facts       *predict.Kernel
}

// processCached is process through the cache: a kernel whose result the
// cache holds is not processed, and a new result is stored once it is
// verified. In verify mode every kernel is processed, and a result the
// cache holds must equal it (checkHit). kc may be nil.
//
// The result it returns no longer holds what only the cache needs, even
// without a cache: Match's result refers to the kernel's full BTF, so
// keeping it until the payload is written held every kernel's raw BTF
// (about 4.5 MB each) for the whole run.
func (o *objects) processCached(kc *kernelCache, k *corpus.Kernel) (*kernelResult, error) {
	var hit *kernelResult
	if kc != nil {
		if hit = kc.hit(k); hit != nil && !kc.verify {
			kc.resultHits.Add(1)
			return hit, nil
		}
	}
	kr, err := o.process(k)
	if err != nil {
		return nil, err
	}
	switch {
	case hit != nil:
		kc.checkHit(o, k, hit, kr)
	case kc != nil:
		kc.store(o, k, kr)
	}
	kr.match, kr.typeIDs, kr.unrelocated, kr.facts = nil, nil, nil, nil
	return kr, nil
}

// process minimizes, distills and verifies one kernel.
func (o *objects) process(k *corpus.Kernel) (*kernelResult, error) {
	vmlinux, err := kernelTarget(k)
	if err != nil {
		return nil, fmt.Errorf("vmlinux BTF: %w", err)
	}
	targets := []*coremin.Target{vmlinux}
	var modules []corpus.Module
	for _, m := range k.Modules {
		t, err := coremin.NewTarget(m.BTF, vmlinux)
		if err != nil {
			return nil, fmt.Errorf("module %s (%s): %w", m.Name, m.Path, err)
		}
		// A module without a type of a relocated name offers no candidate,
		// so leaving it out changes no fixup and saves its decoding.
		if t.Offers(o.relos) {
			targets = append(targets, t)
			modules = append(modules, m)
		}
	}

	res, err := coremin.Match(o.relos, targets)
	if err != nil {
		return nil, err
	}
	minVmlinux, minModules, err := coremin.Minimize(res)
	if err != nil {
		return nil, fmt.Errorf("minimize: %w", err)
	}
	minSpec, err := rawbtf.Parse(minVmlinux, nil)
	if err != nil {
		return nil, fmt.Errorf("minimized vmlinux BTF does not parse: %w", err)
	}

	// The oracle counts candidates on the minimized BTF as Match reads it.
	minVmlinuxTarget, err := coremin.NewTarget(minVmlinux, nil)
	if err != nil {
		return nil, fmt.Errorf("minimized vmlinux BTF does not parse: %w", err)
	}
	minTargets := []*coremin.Target{minVmlinuxTarget}

	rows := o.rows(res)
	kr := &kernelResult{
		entry: encode.Entry{Key: k.Key, VMLinux: minVmlinux},
		rows:  rows,
		match: res,
	}
	types, bytes := int(minSpec.NextID()-1), len(minSpec.Raw())
	// Modules are kept distilled: the runtime relocates them onto whatever
	// vmlinux BTF it selects.
	var minBase *btfrelocate.Base
	for i, raw := range minModules {
		split, err := rawbtf.Parse(raw, minSpec)
		if err != nil {
			return nil, fmt.Errorf("minimized BTF of module %s does not parse: %w", modules[i].Name, err)
		}
		if split.NextID() == split.FirstID() {
			continue // nothing of this module is needed
		}
		t, err := coremin.NewTarget(raw, minTargets[0])
		if err != nil {
			return nil, fmt.Errorf("minimized BTF of module %s does not parse: %w", modules[i].Name, err)
		}
		minTargets = append(minTargets, t)
		if minBase == nil {
			if minBase, err = btfrelocate.NewBase(minVmlinux); err != nil {
				return nil, fmt.Errorf("minimized vmlinux BTF: %w", err)
			}
		}
		base, newSplit, err := btfdistill.Distill(raw, minBase)
		if err != nil {
			return nil, fmt.Errorf("distill module %s: %w", modules[i].Name, err)
		}
		kr.entry.Modules = append(kr.entry.Modules, encode.Module{Name: modules[i].Name, Base: base, Split: newSplit})
		kr.report.Modules = append(kr.report.Modules, ModuleReport{
			Name:  modules[i].Name,
			Types: int(split.NextID() - split.FirstID()),
			Bytes: len(base) + len(newSplit),
		})
	}

	full, err := fullTargets(k, modules)
	if err != nil {
		return nil, err
	}
	answers, err := o.verify(full, targets, &kr.entry, minTargets)
	if err != nil {
		return nil, err
	}
	kr.facts = predict.NewKernel(full, o.kfuncs)
	kr.typeIDs, kr.unrelocated = o.predict(k.Key, full, kr.facts, rows, nil, answers)
	modReports := kr.report.Modules
	kr.report = report(k.Key, k.Path, o.names, types, bytes, rows)
	kr.report.Modules = modReports
	kr.report.Fixups = answers.FixupDigest()
	return kr, nil
}

// kernelTarget is the kernel's vmlinux BTF as Match reads it: the
// corpus reader's parse, where it made one.
func kernelTarget(k *corpus.Kernel) (*coremin.Target, error) {
	if spec := k.Spec(); spec != nil {
		return coremin.TargetOf(spec), nil
	}
	return coremin.NewTarget(k.VMLinux, nil)
}

// fullTargets is the kernel's full BTF as cilium/ebpf reads it, vmlinux
// then the modules that offer candidates: what the oracle and the load
// prediction relocate against.
func fullTargets(k *corpus.Kernel, modules []corpus.Module) ([]*btf.Spec, error) {
	full := k.FullSpec // the corpus reader's (corpus.Options.FullSpecs)
	if full == nil {
		var err error
		if full, err = btfload.Spec(k.VMLinux, nil); err != nil {
			return nil, fmt.Errorf("cilium/ebpf reads the full vmlinux BTF: %w", err)
		}
	}
	targets := []*btf.Spec{full}
	for _, m := range modules {
		spec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(m.BTF), full)
		if err != nil {
			return nil, fmt.Errorf("cilium/ebpf reads module %s: %w", m.Name, err)
		}
		targets = append(targets, spec)
	}
	return targets, nil
}

// verify is the oracle: every program's fixups against the entry, loaded
// the way the runtime loads it, equal its fixups against the full BTF.
// fullRaw and minRaw are the same BTFs as Match reads them, vmlinux then
// modules, for the oracle to count candidates; minRaw's modules are the
// entry's, before distilling, which keeps their types. It returns the
// fixups against the full BTF, which the load prediction applies.
func (o *objects) verify(fullTargets []*btf.Spec, fullRaw []*coremin.Target, e *encode.Entry, minRaw []*coremin.Target) (*coremin.Answers, error) {
	minTargets, err := minimizedTargets(e)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	oracle, err := o.oracle()
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	full, err := oracle.Relocate(fullTargets, fullRaw)
	if err != nil {
		return nil, err
	}
	min, err := oracle.Relocate(minTargets, minRaw)
	if err != nil {
		return nil, err
	}
	if mismatches := oracle.Verify(full, min); len(mismatches) > 0 {
		var b bytes.Buffer
		for _, m := range mismatches {
			fmt.Fprintf(&b, "\n\t%s", m)
		}
		return nil, fmt.Errorf("%w: %d relocations differ (this is a bug in btfembed, please report it):%s",
			errVerify, len(mismatches), b.String())
	}
	return full, nil
}

// minimizedTargets is an entry's BTF as the runtime loads it: vmlinux,
// then its modules relocated onto it.
func minimizedTargets(e *encode.Entry) ([]*btf.Spec, error) {
	min, err := btf.LoadSpecFromReader(bytes.NewReader(e.VMLinux))
	if err != nil {
		return nil, fmt.Errorf("cilium/ebpf reads the minimized vmlinux BTF: %w", err)
	}
	mods := make([]btfrelocate.Module, len(e.Modules))
	for i, m := range e.Modules {
		mods[i] = btfrelocate.Module(m)
	}
	minModules, err := btfrelocate.LoadModules(mods, e.VMLinux, min)
	if err != nil {
		return nil, fmt.Errorf("relocate minimized modules onto minimized vmlinux: %w", err)
	}
	targets := []*btf.Spec{min}
	for _, m := range e.Modules {
		targets = append(targets, minModules[m.Name])
	}
	return targets, nil
}

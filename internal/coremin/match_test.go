package coremin

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// render writes an outcome the way cilium/ebpf's COREFixup.String does.
func render(r *Relocation, o Outcome) string {
	switch {
	case o.Status == Ambiguous || o.Status == Failed:
		return "error"
	case o.Poisoned:
		return r.Kind.String() + "=poison"
	case r.Kind == TypeIDLocal:
		return fmt.Sprintf("%v=%d->(builder)", r.Kind, o.Local)
	}
	return fmt.Sprintf("%v=%d->%d", r.Kind, o.Local, o.Target)
}

// ciliumFixups relocates every program of obj against target with
// cilium/ebpf and returns the fixups by section and instruction offset,
// "error" for each relocation of a program cilium/ebpf refuses. A
// subprogram's relocation is relocated with each program calling it; if
// the results differ it is left out.
func ciliumFixups(t *testing.T, obj string, target *btf.Spec) map[string]string {
	t.Helper()
	out := make(map[string]string)
	varies := make(map[string]bool)
	for prog, loaded := range programRelocations(t, obj) {
		relos := make([]*btf.CORERelocation, len(loaded))
		keys := make([]string, len(loaded))
		for i, lr := range loaded {
			relos[i], keys[i] = lr.relo, lr.key
		}
		var b btf.Builder
		fixups, err := btf.CORERelocate(relos, []*btf.Spec{target}, prog.ByteOrder, b.Add)
		for i, k := range keys {
			s := "error"
			if err == nil {
				s = fixups[i].String()
				if strings.HasPrefix(s, TypeIDLocal.String()+"=") {
					s = s[:strings.Index(s, "->")] + "->(builder)"
				}
			}
			if old, ok := out[k]; ok && old != s {
				varies[k] = true
			}
			out[k] = s
		}
	}
	for k := range varies {
		delete(out, k)
	}
	return out
}

// TestMatchAgreesWithCilium compares every outcome of Match with the
// fixup cilium/ebpf computes on the full BTF: the test objects (the
// project's and coremin's own) on every kernel, and cilium/ebpf's own CO-RE test objects on their targets.
func TestMatchAgreesWithCilium(t *testing.T) {
	objPaths := append(testObjects(t), ownObjects(t)...)
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			compareWithCilium(t, objPaths, raw, full)
		})
	}
	forCiliumObjects(t, []string{"relocs", "relocs_enum", "relocs_read"}, func(t *testing.T, obj string, raw *rawbtf.Spec, full *btf.Spec) {
		compareWithCilium(t, []string{obj}, raw, full)
	})
}

func compareWithCilium(t *testing.T, objPaths []string, raw *rawbtf.Spec, full *btf.Spec) {
	t.Helper()
	objs, err := Load(objPaths...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := match(objs, []*rawbtf.Spec{raw})
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for i, obj := range objs {
		want := ciliumFixups(t, objPaths[i], full)
		for j, s := range obj.Sites {
			r := &obj.Relocations[s.Relocation]
			w, ok := want[fmt.Sprintf("%s+%d", obj.Functions[s.Function].Section, s.InsnOff)]
			if !ok {
				continue // a subprogram's, resolved differently per caller
			}
			compared++
			if got := render(r, res.Outcome(i, j)); got != w {
				t.Errorf("%v: got %s, cilium/ebpf %s (%v)", obj.SiteString(j), got, w, res.Outcome(i, j).Err)
			}
			// cilium/ebpf writes a kernel type ID into the instruction.
			if isID := strings.HasPrefix(w, TypeIDTarget.String()+"=") && !strings.HasSuffix(w, "=poison"); isID != res.KernelTypeID(i, j) {
				t.Errorf("%v: KernelTypeID: %v, cilium/ebpf fixup %s", obj.SiteString(j), res.KernelTypeID(i, j), w)
			}
		}
	}
	if compared == 0 {
		t.Error("no relocation compared")
	}
}

// TestOracleCatchesDroppedMembers checks the oracle is not vacuous: a BTF
// that lost every member and enumerator must be reported.
func TestOracleCatchesDroppedMembers(t *testing.T) {
	objPaths := testObjects(t)
	objs, err := Load(objPaths...)
	if err != nil {
		t.Fatal(err)
	}
	k := kernels(t)[0]
	raw, full := kernelSpecs(t, k)
	res, err := match(objs, []*rawbtf.Spec{raw})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range res.marks {
		tm.parts, tm.minCount = nil, 0
	}
	minData, _, err := Minimize(res)
	if err != nil {
		t.Fatal(err)
	}
	min, err := btf.LoadSpecFromReader(strings.NewReader(string(minData)))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Verify(loadObjects(t, objPaths), []*btf.Spec{full}, []*btf.Spec{min})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no mismatch reported for a BTF without members")
	}
	t.Logf("%d mismatches, e.g. %v", len(ms), ms[0])
}

// TestMatchConcurrent runs Match on every kernel at once with shared
// objects, as the generator does (run with -race).
func TestMatchConcurrent(t *testing.T) {
	objs, err := Load(testObjects(t)...)
	if err != nil {
		t.Fatal(err)
	}
	ks := kernels(t)
	want := make([][]byte, len(ks))
	for i, k := range ks {
		raw, _ := kernelSpecs(t, k)
		res, err := match(objs, []*rawbtf.Spec{raw})
		if err != nil {
			t.Fatal(err)
		}
		if want[i], _, err = Minimize(res); err != nil {
			t.Fatal(err)
		}
	}
	got := make([][]byte, len(ks))
	errs := make([]error, len(ks))
	var wg sync.WaitGroup
	for i, k := range ks {
		raw, _ := kernelSpecs(t, k)
		wg.Go(func() {
			res, err := match(objs, []*rawbtf.Spec{raw})
			if err == nil {
				got[i], _, err = Minimize(res)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range ks {
		if errs[i] != nil {
			t.Error(errs[i])
		} else if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%s: concurrent output differs", ks[i].name)
		}
	}
}

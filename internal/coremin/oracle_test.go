package coremin

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// minimizeAndVerify minimizes target for objs and runs the oracle.
func minimizeAndVerify(t *testing.T, objPaths []string, raw *rawbtf.Spec, full *btf.Spec) (*Result, []byte) {
	t.Helper()
	res := matchObjects(t, objPaths, raw)
	minData, _, err := Minimize(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range verifyBlob(t, objPaths, full, minData) {
		t.Error(m)
	}
	bpftoolLoads(t, minData, nil)
	return res, minData
}

// TestOracleKernels: every test object against every kernel, one object
// at a time and all together.
func TestOracleKernels(t *testing.T) {
	objs := append(testObjects(t), ownObjects(t)...)
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			for _, obj := range objs {
				t.Run(filepath.Base(obj), func(t *testing.T) {
					minimizeAndVerify(t, []string{obj}, raw, full)
				})
			}
			t.Run("all", func(t *testing.T) {
				minimizeAndVerify(t, objs, raw, full)
			})
		})
	}
}

// TestOracleCilium runs cilium/ebpf's own CO-RE test objects against the
// target its tests use: the object's own BTF, relocs_read_tgt for
// relocs_read.
func TestOracleCilium(t *testing.T) {
	forCiliumObjects(t, []string{"relocs", "relocs_enum", "relocs_read", "tags"}, func(t *testing.T, obj string, raw *rawbtf.Spec, full *btf.Spec) {
		minimizeAndVerify(t, []string{obj}, raw, full)
	})
}

// TestOracleBig runs the big object (testdata/objects/big) on every
// kernel: each outcome of Match against cilium/ebpf's fixup on the full
// BTF, then the oracle on the minimized BTF. Its relocations repeat the
// same few hundred accesses across hundreds of programs, which Match
// computes once each.
func TestOracleBig(t *testing.T) {
	if testing.Short() {
		t.Skip("big object: seconds per kernel")
	}
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			compareWithCilium(t, []string{bigObject}, raw, full)
			minimizeAndVerify(t, []string{bigObject}, raw, full)
		})
	}
}

// TestOracleAsksOnce: the oracle that asks each relocation once where its
// local type has at most one candidate (Relocate with raw BTF) reports
// exactly the mismatches of the oracle that asks every program whole, on
// the minimized BTF and on corrupted copies of it: every struct's members
// shifted one at a time, every named type renamed, and a second type of
// a relocated name added, which gives its relocations two candidates and
// so scoring per program.
func TestOracleAsksOnce(t *testing.T) {
	objPaths := append(testObjects(t), ownObjects(t)...)
	objs := loadObjects(t, objPaths)
	oracle, err := NewOracle(objs)
	if err != nil {
		t.Fatal(err)
	}
	ks := kernels(t)
	if testing.Short() {
		ks = ks[:1]
	}
	for _, k := range ks {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			res := matchObjects(t, objPaths, raw)
			blob, _, err := Minimize(res)
			if err != nil {
				t.Fatal(err)
			}
			whole, once := askBothWays(t, oracle, full, raw)
			rejected, variants := 0, corruptions(t, blob)
			for i, v := range variants {
				minRaw, err := rawbtf.Parse(v, nil)
				if err != nil {
					t.Fatalf("variant %d: %v", i, err)
				}
				min, err := btf.LoadSpecFromReader(bytes.NewReader(v))
				if err != nil {
					continue // cilium/ebpf refuses it: nothing to verify
				}
				wholeMin, onceMin := askBothWays(t, oracle, min, minRaw)
				want, got := oracle.Verify(whole, wholeMin), oracle.Verify(once, onceMin)
				if !slices.Equal(got, want) {
					t.Fatalf("variant %d: asked once: %d mismatches, asked per program: %d\n%v\nwant\n%v", i, len(got), len(want), got, want)
				}
				if i == 0 && len(want) > 0 {
					t.Fatalf("the minimized BTF itself is rejected: %v", want)
				}
				if len(want) > 0 {
					rejected++
				}
			}
			// The corruptions must be ones the oracle can see.
			if rejected < len(variants)/4 {
				t.Errorf("only %d of %d corrupted variants rejected", rejected, len(variants))
			}
			t.Logf("%d variants, %d rejected", len(variants), rejected)
		})
	}
}

// TestOracleFailedApart: when btf.CORERelocate refuses the relocations
// asked apart from their programs (here a big-endian object against a
// little-endian kernel, which it refuses whole), each program is asked
// whole and gives what asking per program gives: no fixups, the error.
func TestOracleFailedApart(t *testing.T) {
	objs := loadObjects(t, []string{filepath.Join(kerneltest.CiliumTestdata(t), "relocs-eb.elf")})
	oracle, err := NewOracle(objs)
	if err != nil {
		t.Fatal(err)
	}
	raw, full := kernelSpecs(t, kernels(t)[0])
	whole, once := askBothWays(t, oracle, full, raw)
	apart := 0
	for _, a := range once.single[0] {
		if a.asked {
			apart++
		}
	}
	if apart == 0 {
		t.Fatal("no relocation was asked apart from its program")
	}
	for _, p := range oracle.progs[0] {
		wf, werr := whole.Fixups(0, p.name)
		of, oerr := once.Fixups(0, p.name)
		if len(p.relos) > 0 && werr == nil {
			t.Fatalf("%s: a big-endian program relocates against a little-endian kernel", p.name)
		}
		if fmt.Sprint(werr) != fmt.Sprint(oerr) || !slices.Equal(wf, of) {
			t.Errorf("%s: asked once %v, %v; asked per program %v, %v", p.name, of, oerr, wf, werr)
		}
	}
}

// askBothWays asks the oracle's questions against spec per program (no
// raw BTF to count candidates with) and each once (with raw).
func askBothWays(tb testing.TB, o *Oracle, spec *btf.Spec, raw *rawbtf.Spec) (whole, once *Answers) {
	tb.Helper()
	whole, err := o.Relocate([]*btf.Spec{spec}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	once, err = o.Relocate([]*btf.Spec{spec}, []*Target{{spec: raw}})
	if err != nil {
		tb.Fatal(err)
	}
	return whole, once
}

// corruptions returns blob, then copies of it with one type changed each:
// a struct's or union's last member shifted by a byte, a named type
// renamed, or a named struct's first member renamed and a copy of it
// added with its last member renamed instead.
func corruptions(tb testing.TB, blob []byte) [][]byte {
	tb.Helper()
	spec, err := rawbtf.Parse(blob, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var recs []rawbtf.Record
	for id := rawbtf.TypeID(1); id < spec.NextID(); id++ {
		typ, err := spec.Type(id)
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, typ.Record())
	}
	encode := func(recs []rawbtf.Record) []byte {
		e := rawbtf.NewEncoder(spec.ByteOrder(), nil)
		for _, r := range recs {
			if _, err := e.Add(r); err != nil {
				tb.Fatal(err)
			}
		}
		return e.Bytes()
	}
	out := [][]byte{blob}
	for i, r := range recs {
		edit := func(fn func(*rawbtf.Record)) {
			c := slices.Clone(recs)
			c[i].Members = slices.Clone(c[i].Members)
			fn(&c[i])
			out = append(out, encode(c))
		}
		if (r.Kind == rawbtf.KindStruct || r.Kind == rawbtf.KindUnion) && len(r.Members) > 0 {
			edit(func(r *rawbtf.Record) { r.Members[len(r.Members)-1].BitOffset += 8 })
			if r.Name != "" && len(r.Members) > 1 {
				// Two candidates, each missing a member the other has:
				// a program reading both finds them tied.
				c := slices.Clone(recs)
				c[i].Members = slices.Clone(r.Members)
				c[i].Members[0].Name += "x"
				dup := r
				dup.Members = slices.Clone(r.Members)
				dup.Members[len(dup.Members)-1].Name += "x"
				out = append(out, encode(append(c, dup)))
			}
		}
		if r.Name != "" && r.Kind != rawbtf.KindFunc {
			edit(func(r *rawbtf.Record) { r.Name += "x" })
		}
	}
	return out
}

package coremin

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/kerneltest/kernelspec"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// kernel is one real kernel BTF of the test corpus, parsed on first use.
type kernel struct {
	name string
	raw  []byte
}

// kernels lists the testdata kernels and, where the machine has one, the
// running kernel's BTF, named by release ("running" for the latter).
func kernels(tb testing.TB) []kernel {
	tb.Helper()
	var ks []kernel
	for _, k := range kerneltest.Corpus(tb) {
		ks = append(ks, kernel{k.Release, k.BTF})
	}
	if raw, err := kerneltest.RunningBTF(); err == nil {
		ks = append(ks, kernel{"running", raw})
	}
	return ks
}

func kernelSpecs(tb testing.TB, k kernel) (*rawbtf.Spec, *btf.Spec) {
	tb.Helper()
	s := kernelspec.Must(tb, k.name, k.raw)
	return s.Raw, s.Spec
}

// testObjects are the project's compiled test objects.
func testObjects(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob("../../testdata/objects/*.o")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no test objects: %v", err)
	}
	return paths
}

// ownObjects are coremin's own test objects (testdata/*.c), each made
// for one mechanism of Minimize.
func ownObjects(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob("testdata/*.o")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no test objects in internal/coremin/testdata: %v", err)
	}
	return paths
}

// elfBTF returns the .BTF section of an ELF object.
func elfBTF(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".BTF")
	if sec == nil {
		tb.Fatal(errors.New(path + ": no .BTF"))
	}
	data, err := sec.Data()
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// matchObjects loads objects and matches them against targets.
func matchObjects(tb testing.TB, objPaths []string, targets ...*rawbtf.Spec) *Result {
	tb.Helper()
	objs, err := Load(objPaths...)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := match(objs, targets)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// loadObjects loads objPaths.
func loadObjects(tb testing.TB, objPaths []string) []*Object {
	tb.Helper()
	objs, err := Load(objPaths...)
	if err != nil {
		tb.Fatal(err)
	}
	return objs
}

// verifyBlob runs the oracle for objects on a kernel's full BTF and a
// minimized vmlinux blob of it.
func verifyBlob(tb testing.TB, objPaths []string, full *btf.Spec, blob []byte) []Mismatch {
	tb.Helper()
	min, err := btf.LoadSpecFromReader(bytes.NewReader(blob))
	if err != nil {
		tb.Fatalf("cilium/ebpf rejects the minimized BTF: %v", err)
	}
	ms, err := Verify(loadObjects(tb, objPaths), []*btf.Spec{full}, []*btf.Spec{min})
	if err != nil {
		tb.Fatal(err)
	}
	return ms
}

// loadedRelocation is a CO-RE relocation as cilium/ebpf loads it, keyed
// "section+offset" by where it stands in the ELF, as Load keys them.
type loadedRelocation struct {
	key  string
	relo *btf.CORERelocation
}

// programRelocations loads obj with cilium/ebpf and lists each program's
// CO-RE relocations, subprograms linked in, in instruction order.
func programRelocations(tb testing.TB, obj string) map[*ebpf.ProgramSpec][]loadedRelocation {
	tb.Helper()
	coll, err := ebpf.LoadCollectionSpec(obj)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := elf.Open(obj)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		tb.Fatal(err)
	}
	type where struct {
		section string
		start   uint64
	}
	funcs := make(map[string]where)
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && int(s.Section) < len(f.Sections) {
			funcs[s.Name] = where{f.Sections[s.Section].Name, s.Value}
		}
	}
	out := make(map[*ebpf.ProgramSpec][]loadedRelocation)
	for _, prog := range coll.Programs {
		var cur where
		var curStart uint64
		for iter := prog.Instructions.Iterate(); iter.Next(); {
			if sym := iter.Ins.Symbol(); sym != "" {
				cur, curStart = funcs[sym], uint64(iter.Offset)
			}
			if relo := btf.CORERelocationMetadata(iter.Ins); relo != nil {
				key := fmt.Sprintf("%s+%d", cur.section, cur.start+(uint64(iter.Offset)-curStart)*8)
				out[prog] = append(out[prog], loadedRelocation{key, relo})
			}
		}
	}
	return out
}

// forCiliumObjects runs fn as a subtest for each of cilium/ebpf's CO-RE
// test objects named, in both byte orders, with the target BTF its own
// tests use: the object's own .BTF, relocs_read_tgt for relocs_read.
func forCiliumObjects(t *testing.T, names []string, fn func(t *testing.T, obj string, raw *rawbtf.Spec, full *btf.Spec)) {
	t.Helper()
	dir := kerneltest.CiliumTestdata(t)
	for _, name := range names {
		for _, end := range []string{"el", "eb"} {
			obj := filepath.Join(dir, name+"-"+end+".elf")
			tgt := obj
			if name == "relocs_read" {
				tgt = filepath.Join(dir, "relocs_read_tgt-"+end+".elf")
			}
			t.Run(filepath.Base(obj), func(t *testing.T) {
				data := elfBTF(t, tgt)
				raw, err := rawbtf.Parse(data, nil)
				if err != nil {
					t.Fatal(err)
				}
				full, err := btf.LoadSpecFromReader(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				fn(t, obj, raw, full)
			})
		}
	}
}

package coremin

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestLoadAgreesWithCilium: every relocation cilium/ebpf attaches to an
// instruction is one Load read, with the same kind, local type and access
// path.
func TestLoadAgreesWithCilium(t *testing.T) {
	paths := testObjects(t)
	for _, name := range []string{"relocs", "relocs_enum", "relocs_read", "tags"} {
		for _, end := range []string{"el", "eb"} {
			paths = append(paths, filepath.Join(kerneltest.CiliumTestdata(t), name+"-"+end+".elf"))
		}
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			objs, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			obj := objs[0]
			ours := make(map[string]string)
			for _, s := range obj.Sites {
				r := &obj.Relocations[s.Relocation]
				ours[fmt.Sprintf("%s+%d", obj.Functions[s.Function].Section, s.InsnOff)] = fmt.Sprintf("CORERelocation(%s, %%s[%s], local_id=%d)", r.Kind, r.Access, r.TypeID)
			}
			seen := make(map[string]bool)
			for _, relos := range programRelocations(t, path) {
				for _, lr := range relos {
					k := lr.key
					seen[k] = true
					want, ok := ours[k]
					if !ok {
						t.Errorf("%s: relocation %v not loaded", k, lr.relo)
						continue
					}
					got := lr.relo.String()
					// The local type prints differently; compare the rest.
					if i, j := strings.Index(got, ", "), strings.LastIndex(got, "["); i < 0 || j < 0 || fmt.Sprintf(want, got[i+2:j]) != got {
						t.Errorf("%s: loaded %s, cilium/ebpf %s", k, want, got)
					}
				}
			}
			if len(seen) != len(ours) {
				t.Errorf("cilium/ebpf sees %d relocations, Load %d", len(seen), len(ours))
			}
		})
	}
}

// withoutSections copies a real object without the named sections.
func withoutSections(t *testing.T, src string, sections ...string) string {
	t.Helper()
	objcopy, err := exec.LookPath("llvm-objcopy")
	if err != nil {
		t.Skip("llvm-objcopy not installed")
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	args := []string{}
	for _, s := range sections {
		args = append(args, "--remove-section", s)
	}
	if out, err := exec.Command(objcopy, append(args, src, dst)...).CombinedOutput(); err != nil {
		t.Fatalf("llvm-objcopy: %v\n%s", err, out)
	}
	return dst
}

func TestLoadWithoutRelocations(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "objects", "fields-el.o")
	for _, tc := range []struct {
		name     string
		sections []string
		wantBTF  bool
	}{
		{"no .BTF.ext", []string{".BTF.ext"}, true},
		{"no BTF at all", []string{".BTF.ext", ".BTF"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Load(withoutSections(t, src, tc.sections...))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(objs[0].Relocations); n != 0 {
				t.Errorf("%d relocations", n)
			}
			if (objs[0].btf != nil) != tc.wantBTF {
				t.Errorf("BTF present: %v, want %v", objs[0].btf != nil, tc.wantBTF)
			}
		})
	}
}

// TestLoadMalformed corrupts real objects and checks the error names the
// file, the section and the offset.
func TestLoadMalformed(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "objects", "fields-el.o")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ext := f.Section(".BTF.ext")
	btfSec := f.Section(".BTF")
	bo := f.ByteOrder
	extOff := int(ext.Offset)
	hdrLen := int(bo.Uint32(data[extOff+4:]))
	coreOff := extOff + hdrLen + int(bo.Uint32(data[extOff+24:]))
	firstRecord := coreOff + 4 + 8

	for _, tc := range []struct {
		name   string
		mutate func(b []byte) []byte
		want   []string
	}{
		{"bad .BTF.ext magic", func(b []byte) []byte { b[extOff] ^= 0xff; return b }, []string{"section .BTF.ext", "offset 0", "magic"}},
		{"core_relo beyond section", func(b []byte) []byte { bo.PutUint32(b[extOff+28:], 1<<20); return b }, []string{"section .BTF.ext", "offset 24"}},
		{"record size", func(b []byte) []byte { bo.PutUint32(b[coreOff:], 12); return b }, []string{"section .BTF.ext", "record size 12"}},
		{"unknown kind", func(b []byte) []byte { bo.PutUint32(b[firstRecord+12:], 99); return b }, []string{"section .BTF.ext", fmt.Sprintf("offset %d", firstRecord-extOff), "unknown relocation kind 99"}},
		{"bad type id", func(b []byte) []byte { bo.PutUint32(b[firstRecord+4:], 1<<19); return b }, []string{"section .BTF.ext", "local type"}},
		{"bad access string", func(b []byte) []byte { bo.PutUint32(b[firstRecord+8:], 1<<30); return b }, []string{"section .BTF.ext", "access string"}},
		{"records beyond core_relo", func(b []byte) []byte { bo.PutUint32(b[coreOff+8:], 1<<20); return b }, []string{"section .BTF.ext", fmt.Sprintf("offset %d: 1048576 records", firstRecord-extOff)}},
		{"bad .BTF", func(b []byte) []byte { b[btfSec.Offset] ^= 0xff; return b }, []string{"section .BTF"}},
		{"truncated ELF", func(b []byte) []byte { return b[:len(b)/2] }, []string{"fields-el.o"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mutate(bytes.Clone(data))
			_, err := LoadFromReader(path, bytes.NewReader(b))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestLoadMergesRepeatedSection: if .BTF.ext lists a section twice, its
// records are merged where it first appears, so that a function's sites
// stay adjacent and by offset, as scoring needs.
func TestLoadMergesRepeatedSection(t *testing.T) {
	path := bigObject
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ext, bo := f.Section(".BTF.ext"), f.ByteOrder
	extOff := int(ext.Offset)
	coreOff := extOff + int(bo.Uint32(data[extOff+4:])) + int(bo.Uint32(data[extOff+24:]))
	next := func(sec int) int { return sec + 8 + int(bo.Uint32(data[sec+4:]))*coreReloSize }
	first := coreOff + 4
	third := next(next(first))
	if third >= coreOff+int(bo.Uint32(data[extOff+28:])) {
		t.Fatal("want an object with relocations in three sections")
	}
	// The third section's records now name the first section.
	b := bytes.Clone(data)
	bo.PutUint32(b[third:], bo.Uint32(b[first:]))

	orig, err := LoadFromReader(path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := LoadFromReader(path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.Sites) != len(orig.Sites) {
		t.Fatalf("%d sites, want %d", len(obj.Sites), len(orig.Sites))
	}
	done := make(map[int32]bool)
	for j, s := range obj.Sites {
		if j > 0 && obj.Sites[j-1].Function == s.Function {
			if obj.Sites[j-1].InsnOff > s.InsnOff {
				t.Errorf("site %d: offset %d after %d in one function", j, s.InsnOff, obj.Sites[j-1].InsnOff)
			}
			continue
		}
		if done[s.Function] {
			t.Errorf("site %d: function %v again after another", j, obj.Functions[s.Function])
		}
		done[s.Function] = true
	}
}

func FuzzLoadFromReader(f *testing.F) {
	paths, _ := filepath.Glob("../../testdata/objects/*-el.o")
	for _, p := range append(paths, filepath.Join(kerneltest.CiliumTestdata(f), "relocs_read-eb.elf")) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := LoadFromReader("fuzz.o", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.o: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, r := range obj.Relocations {
			if len(r.accessor) == 0 || !r.Kind.valid() {
				t.Fatalf("invalid relocation accepted: %+v", r)
			}
		}
		for _, s := range obj.Sites {
			if int(s.Relocation) >= len(obj.Relocations) || int(s.Function) >= len(obj.Functions) {
				t.Fatalf("site %+v out of range: %d relocations, %d functions", s, len(obj.Relocations), len(obj.Functions))
			}
		}
	})
}

// FuzzMatch feeds whatever Load accepts to Match and Minimize against
// cilium/ebpf's relocs_read_tgt BTF: bad objects must give errors or
// outcomes, never a panic.
func FuzzMatch(f *testing.F) {
	for _, p := range []string{"relocs_read-el.elf", "relocs-el.elf", "relocs_enum-el.elf"} {
		data, err := os.ReadFile(filepath.Join(kerneltest.CiliumTestdata(f), p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	tgt, err := rawbtf.Parse(elfBTF(f, filepath.Join(kerneltest.CiliumTestdata(f), "relocs_read_tgt-el.elf")), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := LoadFromReader("fuzz.o", bytes.NewReader(data))
		if err != nil {
			return
		}
		res, err := match([]*Object{obj}, []*rawbtf.Spec{tgt})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Minimize(res); err != nil {
			t.Fatal(err)
		}
	})
}

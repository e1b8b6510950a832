package pahole

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// tool returns the installed pahole, or skips.
func tool(t *testing.T) *Tool {
	t.Helper()
	p, err := Find(context.Background())
	if err != nil {
		t.Skipf("no usable pahole: %v", err)
	}
	return p
}

// compile builds testdata/<name>.c (or .S) with cc, -g if debug, into a temporary object.
func compile(t *testing.T, name string, debug bool) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no cc to compile the test objects")
	}
	src, _ := filepath.Glob(filepath.Join("testdata", name+".[cS]"))
	if len(src) != 1 {
		t.Fatalf("no testdata/%s.c or .S", name)
	}
	out := filepath.Join(t.TempDir(), name+".o")
	args := []string{"-O2", "-c", src[0], "-o", out}
	if debug {
		args = append(args, "-g")
	}
	if b, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, b)
	}
	return out
}

// names returns the named types of a spec by name, with their kinds.
func names(t *testing.T, s *rawbtf.Spec) map[string]rawbtf.Kind {
	t.Helper()
	m := map[string]rawbtf.Kind{}
	for id := s.FirstID(); id < s.NextID(); id++ {
		ty, err := s.Type(id)
		if err != nil {
			t.Fatal(err)
		}
		if n := ty.Name; n != "" {
			m[n] = ty.Kind
		}
	}
	return m
}

func TestEncodeSplit(t *testing.T) {
	p := tool(t)
	ctx := context.Background()
	base, err := p.Encode(ctx, Job{ELF: compile(t, "base", true)})
	if err != nil {
		t.Fatal(err)
	}
	baseSpec, err := rawbtf.Parse(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	bn := names(t, baseSpec)
	if bn["btfembed_base_task"] != rawbtf.KindStruct || bn["list_head"] != rawbtf.KindStruct || bn["btfembed_base_pid"] != rawbtf.KindFunc {
		t.Fatalf("base BTF lacks the types of base.c: %v", bn)
	}
	baseFile := filepath.Join(t.TempDir(), "base.btf")
	if err := os.WriteFile(baseFile, base, 0o600); err != nil {
		t.Fatal(err)
	}
	split, err := p.Encode(ctx, Job{ELF: compile(t, "mod", true), BaseFile: baseFile, Base: baseSpec})
	if err != nil {
		t.Fatal(err)
	}
	s, err := rawbtf.Parse(split, baseSpec)
	if err != nil {
		t.Fatal(err)
	}
	if s.FirstID() != baseSpec.NextID() {
		t.Errorf("split BTF starts at ID %d, want %d", s.FirstID(), baseSpec.NextID())
	}
	sn := names(t, s)
	if sn["btfembed_testmod_state"] != rawbtf.KindStruct || sn["btfembed_testmod_hit"] != rawbtf.KindFunc {
		t.Errorf("split BTF lacks the types of mod.c: %v", sn)
	}
	// list_head is the base's: pahole deduplicates against --btf_base.
	if _, ok := sn["list_head"]; ok {
		t.Error("split BTF repeats struct list_head of its base")
	}
}

func TestEncodeNoTypes(t *testing.T) {
	p := tool(t)
	// Without -g there is no DWARF, and pahole fails.
	if _, err := p.Encode(context.Background(), Job{ELF: compile(t, "mod", false)}); err == nil {
		t.Error("Encode of an object without DWARF succeeded")
	}
	// An assembler file's DWARF has no types: pahole exits 0 and writes
	// nothing, which must not pass for BTF.
	_, err := p.Encode(context.Background(), Job{ELF: compile(t, "notypes", true)})
	if !errors.Is(err, extract.ErrNoBTF) {
		t.Fatalf("Encode of DWARF without types: %v, want ErrNoBTF", err)
	}
}

func TestEncodeNotELF(t *testing.T) {
	p := tool(t)
	f := filepath.Join(t.TempDir(), "junk")
	if err := os.WriteFile(f, []byte("not an ELF file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Encode(context.Background(), Job{ELF: f}); err == nil {
		t.Fatal("Encode of a text file succeeded")
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	script := func(name, version string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		pahole string
		want   error
	}{
		{filepath.Join(dir, "missing"), ErrNotFound},
		{script("old", "v1.21"), ErrTooOld},
		{script("new", "v1.27"), nil},
	} {
		t.Setenv(EnvVar, tt.pahole)
		p, err := Find(context.Background())
		if !errors.Is(err, tt.want) {
			t.Errorf("Find with %s: %v, want %v", tt.pahole, err, tt.want)
		}
		if err != nil && !strings.Contains(err.Error(), "Debian package pahole") {
			t.Errorf("Find error %q does not name the Debian package", err)
		}
		if tt.want == nil && p.Version != (Version{1, 27}) {
			t.Errorf("Find version %v", p.Version)
		}
	}
}

// TestEncodeOptionLikeName gives pahole files named like its options:
// each must be read as the file, its BTF holding mod.c's types, never
// taken as --help (which prints help and writes no BTF) or -V (verbose,
// and then no file at all).
func TestEncodeOptionLikeName(t *testing.T) {
	p := tool(t)
	obj, err := os.ReadFile(compile(t, "mod", true))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"--help", "-V", "--version", "-"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), obj, 0o600); err != nil {
			t.Fatal(err)
		}
		// A relative path, as a caller in the file's directory would pass it.
		t.Chdir(dir)
		raw, err := p.Encode(context.Background(), Job{ELF: name})
		if err != nil {
			t.Errorf("Encode of a file named %q: %v", name, err)
			continue
		}
		s, err := rawbtf.Parse(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(t, s); got["btfembed_testmod_state"] != rawbtf.KindStruct {
			t.Errorf("Encode of a file named %q: BTF without mod.c's types: %v", name, got)
		}
	}
}

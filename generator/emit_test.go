package generator

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestEmitGolden(t *testing.T) {
	report := &Report{
		Objects:      []string{"/somewhere/on/a/host/bpf_bpfel.o", "other.o"},
		Kernels:      []KernelReport{{Arch: "x86_64"}, {Arch: "arm64"}, {Arch: "x86_64"}},
		Blobs:        2,
		PayloadBytes: 1234,
	}
	var got bytes.Buffer
	err := Emit(&got, EmitArgs{
		Package:     "agent",
		PayloadFile: "kernelbtf.btfembed",
		Command:     "btfembed -corpus btfhub bpf_bpfel.o",
		Report:      report,
	})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "kernelbtf.go.golden")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("Emit output differs from %s (run with -update after checking):\n%s", golden, got.String())
	}
	if strings.Contains(got.String(), "/somewhere") {
		t.Fatal("a host path leaked into the generated source")
	}
	if !strings.HasPrefix(got.String(), "// "+GeneratedHeader+"\n") {
		t.Fatal("generated file does not start with the standard header")
	}
}

func TestEmitRejects(t *testing.T) {
	for _, args := range []EmitArgs{
		{Package: "", PayloadFile: "p"},
		{Package: "my-pkg", PayloadFile: "p"},
		{Package: "main", Ident: "lower", PayloadFile: "p"},
		{Package: "main", PayloadFile: ""},
		{Package: "main", PayloadFile: "dir/p"},
	} {
		if err := Emit(&bytes.Buffer{}, args); err == nil {
			t.Errorf("Emit(%+v) succeeded", args)
		}
	}
}

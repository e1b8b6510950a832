package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestMergeCraftedMeta is issue 18's part whose meta lists a GOARCH twice,
// so that merge wrote kernelbtf_amd64.go twice, or names one Go does not
// build Linux programs for: both are refused, naming the part, and
// nothing is written.
func TestMergeCraftedMeta(t *testing.T) {
	res, err := generator.Generate(context.Background(), &generator.Args{
		Objects: []string{filepath.Join(kerneltest.Dir(), "objects", "fields-el.o")},
		Corpus:  []string{filepath.Join(kerneltest.Dir(), "btfhub")}, Kernels: "6.1.0-47*", Shards: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ meta, want string }{
		{`{"Command":"btfembed","GOARCHes":["amd64","amd64"]}`, "GOARCH amd64 listed twice"},
		{`{"Command":"btfembed","GOARCHes":["amd64","../x"]}`, `GOARCH "../x" is not one`},
	} {
		dir := t.TempDir()
		var b bytes.Buffer
		if err := res.WritePart(&b, []byte(tc.meta)); err != nil {
			t.Fatal(err)
		}
		part := filepath.Join(dir, "kernelbtf.part-0-of-1")
		if err := os.WriteFile(part, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, []string{"merge", "-q", "-pkg", "agent", "-output", filepath.Join(dir, "kernelbtf.go"), part})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), part) {
			t.Errorf("meta %s: error %v, want one naming the part and saying %q", tc.meta, err, tc.want)
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "kernelbtf*.go")); len(files) != 0 {
			t.Errorf("meta %s: merge wrote %v", tc.meta, files)
		}
	}
}

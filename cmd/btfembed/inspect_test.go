package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

func TestInspect(t *testing.T) {
	payload := filepath.Join("..", "..", "examples", "execsnoop", "kernelbtf_amd64.btfembed")
	arm64Payload := filepath.Join("..", "..", "examples", "execsnoop", "kernelbtf_arm64.btfembed")
	arm64 := filepath.Join(kerneltest.Dir(), "btfhub", "debian", "12", "arm64", "6.1.0-57-arm64.btf.tar.xz")
	x86 := filepath.Join(kerneltest.Dir(), "btfhub", "debian", "12", "x86_64", "6.12.118+deb12-amd64.btf.tar.xz")
	module := filepath.Join(kerneltest.Dir(), "corpus-extra", "debian", "12", "x86_64", "6.12.118+deb12-amd64.modules", "nf_conntrack.ko.xz")
	corrupt := filepath.Join(t.TempDir(), "corrupt.btfembed")
	data, err := os.ReadFile(payload)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(corrupt, data, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		args []string
		want []string // in the output, or in the error when wantErr
		err  bool
	}{
		// Type counts of the kernels as shared/corpus/README.md gives them.
		{"payload", []string{payload}, []string{"btfembed payload", "x86_64/6.1.0-47-amd64 (debian 12)", "x86_64/6.12.118+deb12-amd64 (debian 12)"}, false},
		{"arm64 payload", []string{arm64Payload}, []string{"btfembed payload", "arm64/6.1.0-57-arm64 (debian 12)"}, false},
		{"kernel", []string{arm64}, []string{"109726 types", "struct"}, false},
		{"module", []string{"-B", x86, module}, []string{"split BTF", "func"}, false},
		{"module without base", []string{module}, []string{module, "-B"}, true},
		{"corrupt payload", []string{corrupt}, []string{"corrupt.btfembed", "corrupt btfembed payload"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(&stdout, &stderr, append([]string{"inspect"}, c.args...))
			got := stdout.String()
			if c.err {
				if err == nil {
					t.Fatalf("no error; output:\n%s", got)
				}
				got = err.Error()
			} else if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
}

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
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
		{"payload", []string{payload}, []string{"btfembed payload", "x86_64/6.1.0-47-amd64 (debian 12)", "x86_64/6.12.118+deb12-amd64 (debian 12)",
			"generated for bpf_x86_bpfel.o (count_exec, handle_exec)"}, false},
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

// TestInspectEscapes is issue 18's part whose arch held a newline, which
// inspect printed raw: a key or module name from a payload never reaches
// the terminal with its control characters.
func TestInspectEscapes(t *testing.T) {
	min := kerneltest.CiliumTestmod(t)
	entries := []encode.Entry{{
		Key:     kernelkey.Key{Arch: "x86_64\nx86_64/forged", Release: "6.1\x1b[2J", Distro: "debian"},
		VMLinux: min.VMLinux,
		Modules: []encode.Module{{Name: "m\rod", Base: min.Base, Split: min.Split}},
	}}
	var b bytes.Buffer
	if err := encode.Write(&b, &encode.Payload{Entries: entries}, nil); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "crafted.btfembed")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"inspect", p}); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if strings.ContainsAny(out, "\r\x1b") || strings.Count(out, "\n") != 3 {
		t.Errorf("control characters printed raw:\n%q", out)
	}
	for _, want := range []string{`x86_64\nx86_64/forged/6.1\x1b[2J (debian)`, `m\rod (`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

// TestInspectFamilies: inspect lists the stable families a payload
// records, with their members.
func TestInspectFamilies(t *testing.T) {
	entries := payloadtest.Entries(t)
	i := slices.IndexFunc(entries, func(e encode.Entry) bool { return e.Key.Release == "6.1.0-47-amd64" })
	f, _, _ := kernelkey.FamilyOf(entries[i].Key)
	e := entries[i]
	e.Key = f.Key(48)
	var b bytes.Buffer
	err := encode.Write(&b, &encode.Payload{Entries: append(entries, e), Families: []payload.FamilyRecord{{Family: f, ABIs: []uint64{47, 48}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "family.btfembed")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := run(&stdout, io.Discard, []string{"inspect", p}); err != nil {
		t.Fatal(err)
	}
	if want := "stable family debian 12 x86_64 6.1.0-*-amd64 (6.1.0-47-amd64, 6.1.0-48-amd64)\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("inspect does not say %q:\n%s", want, stdout.String())
	}
}

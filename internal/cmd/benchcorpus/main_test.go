package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestDerive: the derived kernels are distinct, valid BTF that both
// btfembed's reader and cilium/ebpf accept, differ from their sources,
// and the same n gives the same bytes.
func TestDerive(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes every testdata kernel")
	}
	from := filepath.Join(kerneltest.Dir(), "btfhub")
	const n = 5
	var outs []string
	for range 2 {
		out := t.TempDir()
		if err := run(io.Discard, []string{"-n", "5", "-o", out, "-from", from}); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	sources := map[string][]byte{}
	for k, err := range corpus.Read(context.Background(), []string{from}, nil) {
		if err != nil {
			t.Fatal(err)
		}
		sources[k.Key.Arch+"/"+k.Key.Release] = k.VMLinux
	}
	seen := map[string]bool{}
	count := 0
	for k, err := range corpus.Read(context.Background(), []string{outs[0]}, nil) {
		if err != nil {
			t.Fatal(err)
		}
		count++
		if seen[k.Key.Release] {
			t.Errorf("release %s twice", k.Key.Release)
		}
		seen[k.Key.Release] = true
		if _, err := btf.LoadSpecFromReader(bytes.NewReader(k.VMLinux)); err != nil {
			t.Errorf("%s: cilium/ebpf: %v", k.Path, err)
		}
		for _, src := range sources {
			if bytes.Equal(src, k.VMLinux) {
				t.Errorf("%s is a source kernel unchanged", k.Path)
			}
		}
		rel, _ := filepath.Rel(outs[0], k.Path)
		again, err := os.ReadFile(filepath.Join(outs[1], rel))
		if err != nil || !bytes.Equal(again, k.VMLinux) {
			t.Errorf("%s differs between two runs", rel)
		}
	}
	if count != n {
		t.Fatalf("%d kernels, want %d", count, n)
	}
}

func TestRelease(t *testing.T) {
	for _, c := range []struct {
		src  string
		i    int
		want string
	}{
		{"6.1.0-47-amd64", 0, "6.1.1-47-amd64"},
		{"6.12.118+deb12-amd64", 4, "6.12.123+deb12-amd64"},
		{"weird", 3, "weird.3"},
	} {
		if got := release(c.src, c.i); got != c.want {
			t.Errorf("release(%q, %d) = %q, want %q", c.src, c.i, got, c.want)
		}
	}
}

// TestDecodeRefuses: a kernel derive could not edit is refused when it is
// read, with the reason, rather than derived from forever.
func TestDecodeRefuses(t *testing.T) {
	intType := rawbtf.Record{Kind: rawbtf.KindInt, Name: "int", SizeType: 4, Int: rawbtf.IntEnc{Encoding: rawbtf.IntSigned, Bits: 32}}
	oneMember := rawbtf.Record{Kind: rawbtf.KindStruct, Name: "s", SizeType: 4, Members: []rawbtf.Member{{Name: "a", Type: 1}}}
	twoMembers := rawbtf.Record{Kind: rawbtf.KindStruct, Name: "s", SizeType: 8, Members: []rawbtf.Member{{Name: "a", Type: 1}, {Name: "b", Type: 1, BitOffset: 32}}}
	anonymous := twoMembers
	anonymous.Name = ""
	for _, tc := range []struct {
		name    string
		records []rawbtf.Record
		wantErr string
	}{
		{"no struct", []rawbtf.Record{intType}, "no named struct"},
		{"one member", []rawbtf.Record{intType, oneMember}, "no named struct"},
		{"anonymous", []rawbtf.Record{intType, anonymous}, "no named struct"},
		{"no int", []rawbtf.Record{{Kind: rawbtf.KindInt, Name: "long", SizeType: 8, Int: rawbtf.IntEnc{Encoding: rawbtf.IntSigned, Bits: 64}}, twoMembers}, "no int type"},
		{"editable", []rawbtf.Record{intType, twoMembers}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := rawbtf.NewEncoder(binary.LittleEndian, nil)
			for _, r := range tc.records {
				if _, err := enc.Add(r); err != nil {
					t.Fatal(err)
				}
			}
			src, err := decode(kernelkey.Key{}, enc.Bytes())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := derive(src, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

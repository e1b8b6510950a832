package btfload

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// FuzzSpec checks that whatever the bytes, Spec and
// btf.LoadSpecFromReader agree: both refuse them, or both decode the same
// types (or fail on the same type).
func FuzzSpec(f *testing.F) {
	for _, b := range blobs(f) {
		if len(b.raw) < 64<<10 { // the test objects, not the kernels
			f.Add(b.raw)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, wantErr := btf.LoadSpecFromReader(bytes.NewReader(raw))
		got, err := Spec(raw, nil)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Spec: %v; btf.LoadSpecFromReader: %v", err, wantErr)
		}
		if err != nil {
			return
		}
		g, gErr := encodeAll(got)
		w, wErr := encodeAll(want)
		if (gErr == nil) != (wErr == nil) || !bytes.Equal(g, w) {
			t.Fatalf("the two loads decode differently (errors %v, %v)", gErr, wErr)
		}
	})
}

// FuzzFile checks that whatever a file holds, File either refuses it or
// gives its bytes and the types btf.LoadSpecFromReader decodes from them
// (or fails on the same type). It may refuse what the plain load takes
// (bytes rawbtf does not index): its caller then reads the file its own
// way.
func FuzzFile(f *testing.F) {
	for _, b := range blobs(f) {
		if len(b.raw) < 64<<10 {
			f.Add(b.raw)
		}
	}
	path := filepath.Join(f.TempDir(), "btf")
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		got, bytesRead, _, err := File(path, 1<<20)
		if err != nil {
			return
		}
		if !bytes.Equal(bytesRead, raw) {
			t.Fatal("the bytes differ from the file's")
		}
		want, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("File loads what btf.LoadSpecFromReader refuses: %v", err)
		}
		g, gErr := encodeAll(got)
		w, wErr := encodeAll(want)
		if (gErr == nil) != (wErr == nil) || !bytes.Equal(g, w) {
			t.Fatalf("the two loads decode differently (errors %v, %v)", gErr, wErr)
		}
	})
}

// encodeAll encodes every type of s, in ID order, or gives the error of
// the first type that does not decode or encode.
func encodeAll(s *btf.Spec) ([]byte, error) {
	b, err := btf.NewBuilder(nil, nil)
	if err != nil {
		return nil, err
	}
	for typ, err := range s.All() {
		if err != nil {
			return nil, err
		}
		if _, err := b.Add(typ); err != nil {
			return nil, err
		}
	}
	return b.Marshal(nil, nil)
}

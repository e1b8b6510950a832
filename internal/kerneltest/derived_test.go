package kerneltest

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestDerived checks that a derivation runs once per input content and
// name, across calls, and that its error is returned and not cached.
func TestDerived(t *testing.T) {
	cache := t.TempDir()
	defer func(f func() string) { derivedDir = f }(derivedDir)
	derivedDir = func() string { return cache }
	input := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(input, []byte(rand.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("pahole crashed")
	calls := 0
	derive := func(out string, err error) func() ([]byte, error) {
		return func() ([]byte, error) {
			calls++
			return []byte(out), err
		}
	}
	for _, tt := range []struct {
		what, out string
		err       error
		want      string
		wantErr   error
		wantCalls int
	}{
		{"a.btf", "", broken, "", broken, 1},
		{"a.btf", "first", nil, "first", nil, 2},
		{"a.btf", "second", nil, "first", nil, 2}, // cached
		{"b.btf", "other", nil, "other", nil, 3},  // another name
	} {
		got, err := Derived(input, tt.what, derive(tt.out, tt.err))
		if !errors.Is(err, tt.wantErr) || string(got) != tt.want || calls != tt.wantCalls {
			t.Errorf("Derived(%s) = %q, %v after %d derivations; want %q, %v after %d", tt.what, got, err, calls, tt.want, tt.wantErr, tt.wantCalls)
		}
	}
	if _, err := Derived(filepath.Join(t.TempDir(), "missing"), "a.btf", derive("x", nil)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Derived of a missing input: %v, want ErrNotExist", err)
	}
}

// TestReadIndex checks that a fetched kernel's index is used only where it
// names packages by digest that are in the cache.
func TestReadIndex(t *testing.T) {
	const (
		image = "1761e2d1ef42f80f3b2757acf439bcf7f05b1c16cfdf79332c89270543a1c78a.deb"
		dbg   = "b1669ea4503b8647b423cc370824af17302aca9d946157a1b699dca3bdf0a120.deb"
	)
	for _, tt := range []struct {
		name, index string
		files       []string
		ok          bool
	}{
		{"both there", `{"Release":"6.1.0-57-686-pae","Image":"` + image + `","Dbg":"` + dbg + `"}`, []string{image, dbg}, true},
		{"dbg missing", `{"Release":"6.1.0-57-686-pae","Image":"` + image + `","Dbg":"` + dbg + `"}`, []string{image}, false},
		{"path escape", `{"Release":"r","Image":"../../etc/passwd","Dbg":"` + dbg + `"}`, []string{dbg}, false},
		{"not JSON", `{`, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range append(tt.files, index686PAE) {
				data := []byte("deb")
				if f == index686PAE {
					data = []byte(tt.index)
				}
				if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			k, err := readIndex(dir)
			if (err == nil) != tt.ok {
				t.Fatalf("readIndex: %+v, %v; want ok %v", k, err, tt.ok)
			}
			if tt.ok && (k.Image != filepath.Join(dir, image) || k.Dbg != filepath.Join(dir, dbg) || k.Release != "6.1.0-57-686-pae") {
				t.Errorf("readIndex = %+v", k)
			}
		})
	}
}

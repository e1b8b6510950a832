package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var errDisk = errors.New("disk on fire")

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		old     string // "" for no file at the path before
		write   func(path string) error
		want    string // the file's contents after
		wantErr error  // nil for success
	}{
		{"new file", "", func(p string) error { return WriteFile(p, []byte("new")) }, "new", nil},
		{"replace", "old", func(p string) error { return WriteFile(p, []byte("new")) }, "new", nil},
		{"writer", "old", func(p string) error {
			return Write(p, func(w io.Writer) error {
				_, err := io.WriteString(w, "new")
				return err
			})
		}, "new", nil},
		{"failing fn keeps the old file", "old", func(p string) error {
			return Write(p, func(w io.Writer) error {
				io.WriteString(w, "half")
				return errDisk
			})
		}, "old", errDisk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.btf")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := tc.write(path)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatal(err)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			case err != nil && !strings.Contains(err.Error(), path):
				t.Errorf("error %v does not name %s", err, path)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("file holds %q, want %q", b, tc.want)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			wantMode := os.FileMode(0o644)
			if tc.old != "" {
				wantMode = 0o600 // the replaced file's
			}
			if st.Mode().Perm() != wantMode {
				t.Errorf("mode %v, want %v", st.Mode().Perm(), wantMode)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				t.Errorf("directory holds %d files, want only %s (no temporary file left)", len(entries), path)
			}
		})
	}
}

func TestWriteMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "out.btf")
	err := WriteFile(path, []byte("x"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want one naming %s that wraps os.ErrNotExist", err, path)
	}
}

// TestWriteFiles: all files are replaced together, and a failure to write
// one leaves every file as it was, with no temporary file behind.
func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte("old a"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "missing", "c")
	if _, err := WriteFiles([]File{{Path: a, Data: []byte("new a")}, {Path: b, Data: []byte("new b")}, {Path: bad}}); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if got, _ := os.ReadFile(a); string(got) != "old a" {
		t.Errorf("a is %q after a failed WriteFiles", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("failed WriteFiles left %d files, want only a", len(entries))
	}
	if _, err := WriteFiles([]File{{Path: a, Data: []byte("new a")}, {Path: b, Data: []byte("new b")}}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{a: "new a", b: "new b"} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s is %q, want %q", path, got, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("WriteFiles left %d files, want 2", len(entries))
	}
}

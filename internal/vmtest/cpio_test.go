package vmtest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWriteCPIO extracts WriteCPIO's archive with GNU cpio, an independent
// reader, and checks every file, link and implied directory.
func TestWriteCPIO(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("cpio, the independent reader, is not installed:", err)
	}
	files := []File{
		{Path: "init", Mode: 0o755, Data: []byte("#!/bin/sh\n")},
		{Path: "/etc/os-release", Mode: 0o644, Data: []byte("ID=debian\nVERSION_ID=\"12\"\n")},
		{Path: "bin/alias", Mode: fs.ModeSymlink | 0o777, Data: []byte("/init")},
		{Path: "a/b/c/odd", Mode: 0o600, Data: []byte("12345")}, // 5 bytes: padding
		{Path: "empty", Mode: 0o644},
		{Path: "dir", Mode: fs.ModeDir | 0o700},
	}
	var buf bytes.Buffer
	if err := WriteCPIO(&buf, files); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteCPIO(&again, files); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatalf("second archive differs (err %v)", err)
	}
	dir := t.TempDir()
	cmd := exec.Command("cpio", "-i", "-d", "--quiet", "--no-absolute-filenames")
	cmd.Dir = dir
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v\n%s", err, out)
	}
	for _, f := range files {
		p := filepath.Join(dir, f.Path)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != f.Mode {
			t.Errorf("%s: mode %v, want %v", f.Path, fi.Mode(), f.Mode)
		}
		switch {
		case f.Mode&fs.ModeSymlink != 0:
			if target, err := os.Readlink(p); err != nil || target != string(f.Data) {
				t.Errorf("%s: link to %q (%v), want %q", f.Path, target, err, f.Data)
			}
		case f.Mode.IsRegular():
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, f.Data) {
				t.Errorf("%s: %q (%v), want %q", f.Path, got, err, f.Data)
			}
		}
	}
	for _, d := range []string{"etc", "bin", "a/b/c"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			t.Errorf("implied directory %s: %v", d, err)
		}
	}
}

func TestWriteCPIOBadPaths(t *testing.T) {
	for _, files := range [][]File{
		{{Path: "../escape", Mode: 0o644}},
		{{Path: "/", Mode: fs.ModeDir | 0o755}},
		{{Path: "x", Mode: 0o644}, {Path: "/x", Mode: 0o644}},
		{{Path: "dev/null", Mode: fs.ModeDevice | 0o666}},
	} {
		if err := WriteCPIO(&bytes.Buffer{}, files); err == nil {
			t.Errorf("%v: no error", files)
		}
	}
}

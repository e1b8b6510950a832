package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadFile checks that an input file is read only when it is a
// regular file within the limit: a FIFO must not hang the reader, and an
// oversized file is refused before it is read.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		limit      int64
		want       string // error substring; "" for success
		is         error
		// noFollow is OpenNoFollow's and ReadFileNoFollow's error where
		// they refuse what the others read (a symlink); elsewhere they
		// do as Open and ReadFile do.
		noFollow error
	}{
		{name: "regular", path: small, limit: 10},
		{name: "symlink", path: link, limit: 10, noFollow: syscall.ELOOP},
		{name: "too large", path: small, limit: 9, want: "10 bytes", is: ErrTooLarge},
		{name: "fifo", path: fifo, limit: 10, want: "not a regular file"},
		{name: "directory", path: dir, limit: 10, want: "not a regular file"},
		{name: "missing", path: filepath.Join(dir, "none"), limit: 10, is: os.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Open checks what ReadFile checks before reading.
			f, fi, openErr := Open(c.path, c.limit)
			size := int64(-1)
			if openErr == nil {
				size = fi.Size()
				f.Close()
			}
			if (openErr == nil) != (c.want == "" && c.is == nil) || (openErr == nil && size != 10) {
				t.Fatalf("Open = size %d, %v", size, openErr)
			}
			f, fi, err := OpenNoFollow(c.path, c.limit)
			size = -1
			if err == nil {
				size = fi.Size()
				f.Close()
			}
			switch {
			case c.noFollow != nil:
				if !errors.Is(err, c.noFollow) {
					t.Errorf("OpenNoFollow = %v, want %v", err, c.noFollow)
				}
			case (err == nil) != (openErr == nil) || (err == nil && size != 10) || (c.is != nil && !errors.Is(err, c.is)):
				t.Errorf("OpenNoFollow = size %d, %v; Open = %v", size, err, openErr)
			}
			b, err := ReadFileNoFollow(c.path, c.limit)
			switch {
			case c.noFollow != nil:
				if !errors.Is(err, c.noFollow) {
					t.Errorf("ReadFileNoFollow = %v, want %v", err, c.noFollow)
				}
			case (err == nil) != (openErr == nil) || (err == nil && string(b) != "0123456789") || (c.is != nil && !errors.Is(err, c.is)):
				t.Errorf("ReadFileNoFollow = %q, %v; Open = %v", b, err, openErr)
			}
			b, err = ReadFile(c.path, c.limit)
			if c.want == "" && c.is == nil {
				if err != nil || string(b) != "0123456789" {
					t.Fatalf("ReadFile = %q, %v", b, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("ReadFile: error %v, want one containing %q (wrapping %v)", err, c.want, c.is)
			}
		})
	}
}

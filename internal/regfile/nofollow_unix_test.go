//go:build unix

package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenNoFollow: a symlink that Open follows is refused, and a FIFO
// or an oversized file is refused as Open refuses it.
func TestOpenNoFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, _, err := Open(link, 10); err != nil {
		t.Fatalf("Open does not follow the symlink: %v", err)
	} else {
		f.Close()
	}
	f, size, err := OpenNoFollow(file, 10)
	if err != nil || size != 10 {
		t.Fatalf("OpenNoFollow(regular file) = %d bytes, %v", size, err)
	}
	f.Close()
	for _, c := range []struct {
		path  string
		limit int64
		is    error
	}{
		{link, 10, syscall.ELOOP},
		{fifo, 10, nil},
		{file, 9, ErrTooLarge},
	} {
		f, _, err := OpenNoFollow(c.path, c.limit)
		if err == nil {
			f.Close()
			t.Errorf("OpenNoFollow(%s) succeeded", filepath.Base(c.path))
		} else if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("OpenNoFollow(%s) = %v, want %v", filepath.Base(c.path), err, c.is)
		}
	}
}

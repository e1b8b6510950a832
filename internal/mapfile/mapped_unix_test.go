//go:build unix

package mapfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/regfile"
)

// sink keeps the compiler from dropping the reads the tests make.
var sink byte

// mapFile writes data to a new file, dated an hour ago so that a later
// write moves its modification time whatever the clock's granularity, and
// maps it.
func mapFile(t *testing.T, m *Mapped, data []byte) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kernel.btf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	b, err := m.Map(path, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, data) {
		t.Fatalf("mapped %d bytes, not the file's %d", len(b), len(data))
	}
	return path, b
}

// TestGuardTruncated checks that touching the pages of a mapped file that
// was truncated gives an error naming the file, where it would crash the
// process without Guard, and that Guard leaves the goroutine as it found
// it.
func TestGuardTruncated(t *testing.T) {
	var m Mapped
	path, b := mapFile(t, &m, bytes.Repeat([]byte{1}, 3<<12))
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	err := m.Guard(func() error {
		sink = b[len(b)-1]
		return nil
	})
	if want := fmt.Sprintf("%s: changed while in use: byte %d is gone", path, len(b)-1); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Guard = %v, want an error starting %q", err, want)
	}
	if debug.SetPanicOnFault(false) {
		t.Error("Guard left panic-on-fault set")
	}
}

// TestGuardPassesOn checks that Guard returns f's error and lets any
// other panic go on.
func TestGuardPassesOn(t *testing.T) {
	var m Mapped
	mapFile(t, &m, []byte("BTF"))
	want := errors.New("f failed")
	if err := m.Guard(func() error { return want }); err != want {
		t.Errorf("Guard = %v, want f's error", err)
	}
	defer func() {
		if r := recover(); r != "not a fault" {
			t.Errorf("recovered %v, want f's panic", r)
		}
	}()
	m.Guard(func() error { panic("not a fault") })
}

// TestUnchanged checks that a file written in place while mapped is
// reported, and that one replaced by a rename is not: its mapping still
// holds the file that was mapped.
func TestUnchanged(t *testing.T) {
	data := []byte("0123456789")
	t.Run("written", func(t *testing.T) {
		var m Mapped
		path, b := mapFile(t, &m, data)
		if err := m.Unchanged(); err != nil {
			t.Fatalf("before the write: %v", err)
		}
		if err := os.WriteFile(path, []byte("9876543210"), 0o644); err != nil {
			t.Fatal(err)
		}
		if string(b) != "9876543210" {
			t.Fatalf("mapping holds %q: the test does not write what was mapped", b)
		}
		if err := m.Unchanged(); err == nil || !strings.HasPrefix(err.Error(), path+": changed while in use") {
			t.Fatalf("Unchanged = %v, want an error naming %s", err, path)
		}
	})
	t.Run("replaced", func(t *testing.T) {
		var m Mapped
		path, b := mapFile(t, &m, data)
		other := path + ".new"
		if err := os.WriteFile(other, []byte("9876543210"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(other, path); err != nil {
			t.Fatal(err)
		}
		if string(b) != string(data) {
			t.Fatalf("mapping holds %q after the rename, want %q", b, data)
		}
		if err := m.Unchanged(); err != nil {
			t.Fatalf("Unchanged = %v, want nil", err)
		}
	})
}

// TestMapChecks makes sure Map refuses what regfile.ReadFile refuses
// before it maps anything: a FIFO (which would hang a read), a directory
// and a file over the limit.
func TestMapChecks(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var m Mapped
	if b, err := m.Map(small, 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("Map(regular) = %q, %v", b, err)
	}
	for _, c := range []struct {
		path  string
		limit int64
		want  string
		is    error
	}{
		{small, 9, "10 bytes", regfile.ErrTooLarge},
		{fifo, 10, "not a regular file", nil},
		{dir, 10, "not a regular file", nil},
	} {
		b, err := m.Map(c.path, c.limit)
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("Map(%s, %d) = %d bytes, %v; want an error containing %q", c.path, c.limit, len(b), err, c.want)
		}
	}
}

package cache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSwappedEntry is issue 18's swap: an entry file copied or renamed
// over another key's is a miss with a warning, removed, never the other
// key's data.
func TestSwappedEntry(t *testing.T) {
	c := open(t)
	a, b := NewKey([]byte("6.1.0-50")), NewKey([]byte("6.1.0-47"))
	for _, k := range []Key{a, b} {
		if err := c.Put(k, []byte("result of "+k.String())); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(c.path(a, dataSuffix))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.path(b, dataSuffix), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get(b); ok {
		t.Fatalf("swapped entry is a hit: %q", got)
	}
	if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, "another key") || !strings.Contains(w, b.String()) {
		t.Errorf("warnings %q do not name the swapped entry", w)
	}
	if _, err := os.Lstat(c.path(b, dataSuffix)); !os.IsNotExist(err) {
		t.Errorf("swapped entry not removed: %v", err)
	}
	if _, ok := c.Get(a); !ok {
		t.Error("the original entry is gone")
	}
}

// TestSymlinks: a symlink inside the cache, in place of an entry or of a
// subdirectory, is neither read, nor written through, nor touched; Clean
// removes the links and leaves their targets.
func TestSymlinks(t *testing.T) {
	outside := t.TempDir()
	c := open(t)
	old := time.Now().Add(-48 * time.Hour)

	// An entry that is a link to a well-formed entry elsewhere.
	k := NewKey([]byte("linked entry"))
	target := filepath.Join(outside, "target")
	if err := os.WriteFile(target, frame(k, []byte("planted")), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(target, old, old)
	sub, _ := entryName(k, dataSuffix)
	os.MkdirAll(filepath.Join(c.dir, sub), 0o755)
	if err := os.Symlink(target, c.path(k, dataSuffix)); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get(k); ok {
		t.Fatalf("symlinked entry read: %q", got)
	}
	if st, _ := os.Stat(target); !st.ModTime().Equal(old) {
		t.Error("reading the cache touched a link's target")
	}

	// A subdirectory that is a link: nothing is written through it.
	k2 := NewKey([]byte("linked dir"))
	for entryName2(k2) == sub {
		k2 = NewKey(k2[:])
	}
	if err := os.Symlink(outside, filepath.Join(c.dir, entryName2(k2))); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(k2, []byte("x")); !errors.Is(err, ErrSymlink) {
		t.Errorf("Put through a linked subdirectory: %v, want ErrSymlink", err)
	}
	if _, ok := c.Get(k2); ok {
		t.Error("Get through a linked subdirectory hit")
	}
	if files, _ := os.ReadDir(outside); len(files) != 1 {
		t.Errorf("%d files in the link's target, want only the planted one", len(files))
	}
	if w := strings.Join(c.Warnings(), "\n"); strings.Count(w, ErrSymlink.Error()) < 2 {
		t.Errorf("warnings %q do not report both links", w)
	}

	if err := c.Clean(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{c.path(k, dataSuffix), filepath.Join(c.dir, entryName2(k2))} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("Clean left %s: %v", p, err)
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("Clean removed a link's target: %v", err)
	}
}

func entryName2(k Key) string { sub, _ := entryName(k, dataSuffix); return sub }

// TestUnsafeDir: OpenSSH's rule for ~/.ssh. A cache directory writable by
// group or others, or owned by another user, is refused with ErrUnsafe.
func TestUnsafeDir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string) error
	}{
		{"world-writable", func(dir string) error { return os.Chmod(dir, 0o777) }},
		{"group-writable", func(dir string) error { return os.Chmod(dir, 0o775) }},
		{"other owner", func(dir string) error {
			if os.Getuid() != 0 {
				t.Skip("chown to another user needs root")
			}
			return os.Chown(dir, 12345, 12345)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.setup(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(dir); !errors.Is(err, ErrUnsafe) {
				t.Fatalf("Open: %v, want ErrUnsafe", err)
			}
		})
	}
	if _, err := Open(t.TempDir()); err != nil {
		t.Fatalf("a private directory: %v", err)
	}
}

// TestReadOnly: a cache on a read-only file system opens with a warning
// (no tag, no trim), reads what is there, and fails each Put with a
// warning, never more.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	k := NewKey([]byte("present"))
	c.Put(k, []byte("data"))
	os.Remove(filepath.Join(dir, trimFile)) // so the next Open trims
	mountRO(t, dir)
	c, err = Open(dir)
	if err != nil {
		t.Fatalf("Open of a read-only cache: %v", err)
	}
	if got, ok := c.Get(k); !ok || !bytes.Equal(got, []byte("data")) {
		t.Error("read-only cache does not read")
	}
	if err := c.Put(NewKey([]byte("new")), []byte("x")); err == nil {
		t.Error("Put on a read-only file system succeeded")
	}
	if w := c.Warnings(); len(w) == 0 || !strings.Contains(strings.Join(w, "\n"), "read-only file system") {
		t.Errorf("warnings %q", w)
	}
}

package cache

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFileDigest(t *testing.T) {
	c := open(t)
	// Pretend time has passed, so files written now are past the racy
	// window.
	c.now = func() time.Time { return time.Now().Add(time.Minute) }
	p := filepath.Join(t.TempDir(), "kernel.btf")
	os.WriteFile(p, []byte("first contents"), 0o644)

	d1, err := c.FileDigest(p)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != Key(sha256.Sum256([]byte("first contents"))) {
		t.Fatal("digest is not the SHA-256 of the contents")
	}
	if info, _ := c.Info(); info.StatEntries != 1 {
		t.Fatalf("%d stat index entries, want 1", info.StatEntries)
	}

	// The index answers without reading: plant a different digest for
	// the file's current stat and see it returned.
	abs, _ := filepath.Abs(p)
	st, _ := os.Stat(abs)
	planted := NewKey([]byte("planted"))
	c.put(NewKey([]byte("stat"), []byte(abs)), statSuffix, []byte(statID(st).String()+"\n"+planted.String()))
	if d, _ := c.FileDigest(p); d != planted {
		t.Fatal("stat index not used for an unchanged file")
	}

	// Same size, same modification time, new contents: the status-change
	// time (or inode) tells.
	mtime := st.ModTime()
	os.WriteFile(p, []byte("other contents"), 0o644)
	os.Chtimes(p, mtime, mtime)
	d2, err := c.FileDigest(p)
	if err != nil {
		t.Fatal(err)
	}
	if d2 != Key(sha256.Sum256([]byte("other contents"))) {
		t.Fatal("changed file gives a stale digest")
	}
}

// TestFileDigestRacy: a file modified within the racy window is hashed
// every time, never indexed.
func TestFileDigestRacy(t *testing.T) {
	c := open(t)
	p := filepath.Join(t.TempDir(), "kernel.btf")
	os.WriteFile(p, []byte("x"), 0o644)
	if _, err := c.FileDigest(p); err != nil {
		t.Fatal(err)
	}
	if info, _ := c.Info(); info.StatEntries != 0 {
		t.Fatal("a file modified just now was indexed")
	}
}

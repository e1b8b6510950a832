package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestUnchangedTargetKept: a target that already holds what is written is
// left as it is (same inode, same modification time, no temporary file);
// one that differs anywhere, or in length, is replaced with exactly the
// new bytes. The writes come in pieces, as a report's JSON does, and
// cross the comparison's 32 KiB reads.
func TestUnchangedTargetKept(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 10<<10) // 160 KiB
	flip := func(b []byte, i int) []byte {
		c := bytes.Clone(b)
		c[i] ^= 0xff
		return c
	}
	for _, tc := range []struct {
		name     string
		old, new []byte
	}{
		{"identical", big, big},
		{"identical, empty", []byte{}, []byte{}},
		{"first byte differs", big, flip(big, 0)},
		{"a byte past 100 KiB differs", big, flip(big, 100<<10+7)},
		{"last byte differs", big, flip(big, len(big)-1)},
		{"target longer", big, big[:len(big)-1]},
		{"target shorter", big[:len(big)-1], big},
		{"target empty", []byte{}, big},
		{"written empty", big, []byte{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out")
			if err := os.WriteFile(path, tc.old, 0o640); err != nil {
				t.Fatal(err)
			}
			past := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.Chtimes(path, past, past); err != nil {
				t.Fatal(err)
			}
			before := inode(t, path)
			err := Write(path, func(w io.Writer) error {
				for rest := tc.new; len(rest) > 0; {
					n := min(len(rest), 5000) // pieces not aligned with 32 KiB
					if _, err := w.Write(rest[:n]); err != nil {
						return err
					}
					rest = rest[n:]
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.new) {
				t.Fatalf("target holds %d bytes, not the %d written", len(got), len(tc.new))
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			same := bytes.Equal(tc.old, tc.new)
			if kept := inode(t, path) == before && st.ModTime().Equal(past); kept != same {
				t.Errorf("target kept (inode and mtime) = %v, want %v", kept, same)
			}
			if st.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the target's 0640", st.Mode().Perm())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d files, want only the target", len(entries))
			}
		})
	}
}

// TestUnchangedFailure: a failure while the bytes still match, or after
// they diverged, leaves the target as it was and no temporary file.
func TestUnchangedFailure(t *testing.T) {
	old := bytes.Repeat([]byte("x"), 100<<10)
	for _, tc := range []struct {
		name  string
		write []byte // written before failing
	}{
		{"while matching", old[:50<<10]},
		{"after diverging", append(bytes.Clone(old[:50<<10]), 'y')},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out")
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
			err := Write(path, func(w io.Writer) error {
				if _, err := w.Write(tc.write); err != nil {
					return err
				}
				return errDisk
			})
			if !errors.Is(err, errDisk) {
				t.Fatalf("error %v, want %v", err, errDisk)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
				t.Error("the target changed")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d files, want only the target", len(entries))
			}
		})
	}
}

// TestUnchangedInSet: in a Set, the unchanged file is kept and the changed
// one replaced, together.
func TestUnchangedInSet(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ia := inode(t, a)
	kept, err := WriteFiles([]File{{Path: a, Data: []byte("old")}, {Path: b, Data: []byte("new")}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kept, []string{a}) {
		t.Errorf("kept %v, want [%s]", kept, a)
	}
	if inode(t, a) != ia {
		t.Error("the unchanged file was replaced")
	}
	if got, _ := os.ReadFile(b); string(got) != "new" {
		t.Errorf("b holds %q, want %q", got, "new")
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestSameWriterNotRegular: a FIFO or a symlink put at the target after
// Add checked it is neither waited on nor followed: the writer writes a
// temporary file (which Commit then refuses to rename over it).
func TestSameWriterNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	if err := os.WriteFile(real, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, link} {
		done := make(chan *sameWriter, 1)
		go func() {
			w, err := newSameWriter(path, func() (*os.File, error) { return os.CreateTemp(dir, "tmp") })
			if err != nil {
				t.Error(err)
			}
			done <- w
		}()
		select {
		case w := <-done:
			if w == nil {
				continue
			}
			if w.target != nil || w.tmp == nil {
				t.Errorf("%s: compared with the target instead of writing a temporary file", filepath.Base(path))
			}
			w.close()
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: newSameWriter blocked", filepath.Base(path))
		}
	}
}

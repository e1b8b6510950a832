package atomicfile

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestSetAllOrNothing checks that a Set replaces its targets only when
// every Add succeeded, and refuses targets that are not regular files.
func TestSetAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prepare makes what is at b (a holds "old a" in every case).
		prepare func(t *testing.T, b string)
		// addB adds b to the set.
		addB    func(s *Set, b string) error
		wantErr error // nil: both replaced; otherwise neither
		wantA   string
	}{
		{"both written", nil, func(s *Set, b string) error { return s.AddBytes(b, []byte("new b")) }, nil, "new a"},
		{"second fails", nil, func(s *Set, b string) error {
			return s.Add(b, func(io.Writer) error { return errDisk })
		}, errDisk, "old a"},
		{"second in a missing directory", nil, func(s *Set, b string) error {
			return s.AddBytes(filepath.Join(b, "missing", "r.json"), nil)
		}, os.ErrNotExist, "old a"},
		{"symlink target", func(t *testing.T, b string) {
			if err := os.Symlink("/dev/null", b); err != nil {
				t.Fatal(err)
			}
		}, func(s *Set, b string) error { return s.AddBytes(b, []byte("x")) }, ErrNotRegular, "old a"},
		{"fifo target", func(t *testing.T, b string) {
			if err := syscall.Mkfifo(b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, func(s *Set, b string) error { return s.AddBytes(b, []byte("x")) }, ErrNotRegular, "old a"},
		{"directory target", func(t *testing.T, b string) {
			if err := os.Mkdir(b, 0o755); err != nil {
				t.Fatal(err)
			}
		}, func(s *Set, b string) error { return s.AddBytes(b, []byte("x")) }, ErrNotRegular, "old a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if err := os.WriteFile(a, []byte("old a"), 0o640); err != nil {
				t.Fatal(err)
			}
			if tc.prepare != nil {
				tc.prepare(t, b)
			}
			var s Set
			defer s.Abort()
			err := s.AddBytes(a, []byte("new a"))
			if err == nil {
				err = tc.addB(&s, b)
			}
			if err == nil {
				err = s.Commit()
			}
			s.Abort()
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			got, _ := os.ReadFile(a)
			if string(got) != tc.wantA {
				t.Errorf("a holds %q, want %q", got, tc.wantA)
			}
			if st, _ := os.Stat(a); st.Mode().Perm() != 0o640 {
				t.Errorf("a has mode %v, want the old 0640", st.Mode().Perm())
			}
			assertNoTemps(t, dir)
		})
	}
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), tempMarker) {
			t.Errorf("temporary %s left in %s", e.Name(), dir)
		}
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	return cmd.Process.Pid
}

func TestStaleTemps(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "k.btfembed")
	stale := tempPrefix(out) + strconv.Itoa(deadPID(t)) + "-abc.tmp"
	staleDir := tempPrefix(out) + strconv.Itoa(deadPID(t)) + "-abd.tmp.old"
	ours := tempPrefix(out) + strconv.Itoa(os.Getppid()) + "-abe.tmp" // a running process
	other := filepath.Join(dir, ".other.btfembed-1-abf.tmp")
	for _, f := range []string{stale, ours, other} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(staleDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(out, []byte("x")); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{stale: false, staleDir: false, ours: true, other: true} {
		if _, err := os.Lstat(f); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
}

func TestAddDir(t *testing.T) {
	dir := t.TempDir()
	mods := filepath.Join(dir, "6.1.modules")
	write := func(names ...string) error {
		var s Set
		defer s.Abort()
		err := s.AddDir(mods, func(tmp string) error {
			for _, n := range names {
				if err := os.WriteFile(filepath.Join(tmp, n), []byte(n), 0o644); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		return s.Commit()
	}
	if err := write("a.btf.zst", "b.btf.zst"); err != nil {
		t.Fatal(err)
	}
	if err := write("c.btf.zst"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(mods)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "c.btf.zst" {
		t.Errorf("directory holds %v, want only c.btf.zst", entries)
	}
	assertNoTemps(t, dir)
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	var s Set
	if err := s.AddBytes(filepath.Join(dir, "k.go"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	RemoveTemps()
	defer func() {
		live.mu.Lock()
		live.closed = false
		live.mu.Unlock()
	}()
	assertNoTemps(t, dir)
	if err := s.AddBytes(filepath.Join(dir, "k.btfembed"), []byte("x")); !errors.Is(err, errClosed) {
		t.Errorf("Add after RemoveTemps: %v, want %v", err, errClosed)
	}
	s.Abort()
	if _, err := os.Stat(filepath.Join(dir, "k.go")); err == nil {
		t.Error("k.go written after RemoveTemps")
	}
}

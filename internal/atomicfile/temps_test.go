package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestTempDir(t *testing.T) {
	dir := t.TempDir()
	// A dead process's directory is removed by the next TempDir there.
	stale := tempPrefix(filepath.Join(dir, "dwarf")) + strconv.Itoa(deadPID(t)) + "-abc.tmp"
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp, remove, err := TempDir(dir, "dwarf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale directory left: %v", err)
	}
	if st, err := os.Stat(tmp); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 || filepath.Dir(tmp) != dir {
		t.Fatalf("TempDir made %s: %v, %v", tmp, st, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "vmlinux"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	remove()
	remove()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left after remove: %v", tmp, err)
	}

	// A signal's RemoveTemps removes a live one, and later ones fail.
	tmp, remove, err = TempDir(dir, "dwarf")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	RemoveTemps()
	defer func() {
		live.mu.Lock()
		live.closed = false
		live.mu.Unlock()
	}()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left after RemoveTemps: %v", tmp, err)
	}
	if _, _, err := TempDir(dir, "dwarf"); !errors.Is(err, errClosed) {
		t.Errorf("TempDir after RemoveTemps: %v, want %v", err, errClosed)
	}
	assertNoTemps(t, dir)
}

package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Set replaces several outputs together. Add writes each output to its
// temporary file; Commit renames them all into place once every Add has
// succeeded; Abort (or any failed Add followed by Abort) removes the
// temporary files and leaves every target as it was. The zero Set is
// ready to use; a Set is not safe for concurrent use. Abort after Commit
// does nothing, so `defer s.Abort()` covers every early return.
type Set struct {
	pending []pending
	kept    []string // targets that already held what was written
}

// Kept returns the targets whose Add found them holding exactly the bytes
// written: Commit leaves them as they were.
func (s *Set) Kept() []string { return s.kept }

type pending struct {
	target, tmp string
	dir         bool // tmp is a directory replacing the directory target
}

// AddBytes adds a file holding data.
func (s *Set) AddBytes(path string, data []byte) error {
	return s.Add(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Add writes what fn writes to a temporary file for path, synced and with
// the mode the file at path has (0644 for a new file). The target must be
// a regular file or absent. When the target already holds exactly what fn
// writes, there is no temporary file and Commit leaves the target as it
// is, modification time included (sameWriter). Errors name path.
func (s *Set) Add(path string, fn func(io.Writer) error) (err error) {
	mode, err := targetMode(path, false)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	removeStale(path)
	w, err := newSameWriter(path, func() (*os.File, error) {
		f, err := createTemp(path)
		if err == nil {
			s.pending = append(s.pending, pending{target: path, tmp: f.Name()})
		}
		return f, err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			w.close()
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err := fn(w); err != nil {
		return err
	}
	f, err := w.finish()
	if err != nil {
		return err
	}
	if f == nil {
		s.kept = append(s.kept, path)
		return nil
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// AddDir fills a temporary directory for path with fn, which is given the
// directory's name. On Commit it replaces the directory at path whole, so
// readers see all of the old entries or all of the new ones. The target
// must be a directory or absent.
func (s *Set) AddDir(path string, fn func(dir string) error) (err error) {
	mode, err := targetMode(path, true)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	removeStale(path)
	tmp, err := createTempDir(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	s.pending = append(s.pending, pending{target: path, tmp: tmp, dir: true})
	if err := fn(tmp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Commit renames every temporary file over its target, in the order they
// were added, after checking once more that no target has become a
// symlink or another non-regular file, and then fsyncs the targets'
// directories. A signal handler calling RemoveTemps waits for a Commit in
// progress to end. An error after the first rename names the targets
// already replaced. The renames are one system call each, not one
// together: see the package documentation for what a crash between two
// of them leaves.
func (s *Set) Commit() error {
	live.mu.Lock()
	defer live.mu.Unlock()
	defer s.forget()
	for _, p := range s.pending {
		if _, err := targetMode(p.target, p.dir); err != nil {
			s.removeAll()
			return fmt.Errorf("write %s: %w", p.target, err)
		}
	}
	var done []string
	for i, p := range s.pending {
		if err := commitOne(p); err != nil {
			for _, q := range s.pending[i:] {
				os.RemoveAll(q.tmp)
			}
			if len(done) > 0 {
				return fmt.Errorf("write %s: %w (already replaced: %v)", p.target, err, done)
			}
			return fmt.Errorf("write %s: %w", p.target, err)
		}
		done = append(done, p.target)
	}
	return syncDirs(s.pending)
}

// syncDirs fsyncs the directories of the targets once the renames are
// done, so that a Commit that returned survives a power loss: a rename is
// durable only when its directory is.
func syncDirs(ps []pending) error {
	seen := map[string]bool{}
	for _, p := range ps {
		dir := filepath.Dir(p.target)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		d, err := os.Open(dir)
		if err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
	}
	return nil
}

// Abort removes the temporary files of the Set; the targets are untouched.
func (s *Set) Abort() {
	live.mu.Lock()
	defer live.mu.Unlock()
	s.removeAll()
	s.forget()
}

func (s *Set) removeAll() {
	for _, p := range s.pending {
		os.RemoveAll(p.tmp)
	}
}

// forget drops the Set's temporary names from the signal registry; the
// caller holds live.mu.
func (s *Set) forget() {
	for _, p := range s.pending {
		delete(live.temps, p.tmp)
	}
	s.pending = nil
}

func commitOne(p pending) error {
	if !p.dir {
		return os.Rename(p.tmp, p.target)
	}
	// A directory cannot be renamed over a non-empty one: move the old one
	// aside under a temporary name, then remove it.
	old := p.tmp + ".old"
	if err := os.Rename(p.target, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	} else if err == nil {
		defer os.RemoveAll(old)
	}
	if err := os.Rename(p.tmp, p.target); err != nil {
		os.Rename(old, p.target)
		return err
	}
	return nil
}

// targetMode checks what is at an output path and returns the permission
// bits its replacement gets: the current ones, or the defaults for a new
// file or directory.
func targetMode(path string, dir bool) (fs.FileMode, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if dir {
			return 0o755, nil
		}
		return 0o644, nil
	}
	if err != nil {
		return 0, err
	}
	switch {
	case dir && st.IsDir():
	case !dir && st.Mode().IsRegular():
	default:
		return 0, fmt.Errorf("%w: it is %s; refusing to replace it", ErrNotRegular, describe(st.Mode(), dir))
	}
	return st.Mode().Perm(), nil
}

// ErrNotRegular is wrapped by the errors for an output path that holds
// something other than a regular file (or, for AddDir, a directory).
var ErrNotRegular = errors.New("output path is not a regular file")

func describe(m fs.FileMode, wantDir bool) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case wantDir:
		return "not a directory"
	}
	return "not a regular file"
}

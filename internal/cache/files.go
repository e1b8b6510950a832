package cache

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maxEntry bounds an entry file the cache reads: the largest entries are
// a kernel's BTF with its modules, zstd compressed (a few MB).
const maxEntry = 1 << 30

// ErrSymlink is wrapped by the errors for a symlink found inside the
// cache, where the cache writes only directories and regular files: it is
// refused for reading and writing, never followed.
var ErrSymlink = errors.New("symlink inside the cache refused")

// openDir opens the cache directory (sub "") or one of its two-hex
// subdirectories, creating the latter with create. The cache directory
// itself may be reached through a symlink (the user named it); a
// subdirectory may not: it is opened relative to the cache directory with
// O_NOFOLLOW, so whatever is opened is inside the cache.
func (c *Cache) openDir(sub string, create bool) (int, error) {
	root, err := unix.Open(c.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("cache: open %s: %w", c.dir, err)
	}
	if sub == "" {
		return root, nil
	}
	defer unix.Close(root)
	if create {
		if err := unix.Mkdirat(root, sub, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("cache: mkdir %s: %w", filepath.Join(c.dir, sub), err)
		}
	}
	fd, err := unix.Openat(root, sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		p := filepath.Join(c.dir, sub)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, fmt.Errorf("cache: %s: %w (not a directory)", p, ErrSymlink)
		}
		return -1, fmt.Errorf("cache: open %s: %w", p, err)
	}
	return fd, nil
}

// readFileAt reads the regular file name in the open directory dir (sub
// of the cache, for messages). It refuses a symlink (O_NOFOLLOW) and, by
// fstat on what was opened (non-blocking, so a FIFO cannot hang it),
// anything but a regular file of at most maxEntry bytes.
func (c *Cache) readFileAt(dir int, sub, name string) ([]byte, error) {
	p := filepath.Join(c.dir, sub, name)
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("cache: %s: %w", p, ErrSymlink)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() > maxEntry {
		return nil, fmt.Errorf("cache: %s: not a regular file of at most %d MiB (%s, %d bytes): refused", p, maxEntry>>20, st.Mode().Type(), st.Size())
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("cache: read %s: %w", p, err)
	}
	return b, nil
}

// writeFileAt writes a whole file name in the open directory dir under a
// temporary name created there exclusively (never through a link) and
// renames it into place, which replaces whatever name was, a link
// included, without following it. It does not sync: a file cut short by
// a crash fails its checksum and is recomputed.
func (c *Cache) writeFileAt(dir int, sub, name string, data []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := tmpPrefix + hex.EncodeToString(rnd[:])
	p := filepath.Join(c.dir, sub, name)
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("cache: write %s: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return fmt.Errorf("cache: write %s: %w", p, err)
	}
	return nil
}

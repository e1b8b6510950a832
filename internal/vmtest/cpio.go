package vmtest

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// File is one entry of an initramfs.
type File struct {
	// Path is where the file appears in the guest, relative to / ("init",
	// "etc/os-release"). Missing parent directories are created.
	Path string
	// Mode is the permission bits, plus fs.ModeDir for a directory or
	// fs.ModeSymlink for a symbolic link.
	Mode fs.FileMode
	// Data is the content of a regular file, or the target of a link.
	Data []byte
}

// newc header field values (cpio(5), the kernel's
// Documentation/driver-api/early-userspace/buffer-format.rst).
const (
	newcMagic   = "070701"
	newcTrailer = "TRAILER!!!"
	modeDir     = 0o040000
	modeReg     = 0o100000
	modeLink    = 0o120000
)

// WriteCPIO writes files as a newc ("SVR4 with no CRC") cpio archive, the
// format the kernel unpacks as an initramfs. Entries are written sorted by
// path, parents first, owned by root with mtime 0, so the archive depends
// only on the files given.
func WriteCPIO(w io.Writer, files []File) error {
	entries := map[string]File{}
	for _, f := range files {
		p := path.Clean(strings.TrimPrefix(f.Path, "/"))
		if p == "." || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("initramfs path %q is outside the root", f.Path)
		}
		if _, dup := entries[p]; dup {
			return fmt.Errorf("initramfs path %q given twice", p)
		}
		f.Path = p
		entries[p] = f
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := entries[dir]; !ok {
				entries[dir] = File{Path: dir, Mode: fs.ModeDir | 0o755}
			}
		}
	}
	names := make([]string, 0, len(entries))
	for p := range entries {
		names = append(names, p)
	}
	slices.Sort(names) // a parent sorts before its children

	cw := &countWriter{w: w}
	for i, p := range names {
		f := entries[p]
		mode := uint32(f.Mode.Perm())
		switch {
		case f.Mode.IsDir():
			if len(f.Data) > 0 {
				return fmt.Errorf("initramfs directory %q has data", p)
			}
			mode |= modeDir
		case f.Mode&fs.ModeSymlink != 0:
			mode |= modeLink
		case f.Mode.IsRegular():
			mode |= modeReg
		default:
			return fmt.Errorf("initramfs file %q: unsupported mode %v", p, f.Mode)
		}
		if err := writeEntry(cw, uint32(i+1), mode, p, f.Data); err != nil {
			return err
		}
	}
	return writeEntry(cw, 0, 0, newcTrailer, nil)
}

func writeEntry(w *countWriter, ino, mode uint32, name string, data []byte) error {
	nlink := uint32(1)
	if mode&modeDir == modeDir {
		nlink = 2
	}
	if uint64(len(data)) > 0xffffffff {
		return fmt.Errorf("initramfs file %q: %d bytes does not fit newc", name, len(data))
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize (with its NUL), check.
	fmt.Fprintf(w, "%s%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		newcMagic, ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	io.WriteString(w, name)
	w.Write([]byte{0})
	w.pad()
	w.Write(data)
	w.pad()
	return w.err
}

// countWriter tracks the offset for newc's 4-byte alignment and keeps the
// first error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = fmt.Errorf("write initramfs: %w", err)
	}
	return n, c.err
}

func (c *countWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.Write(make([]byte, 4-r))
	}
}

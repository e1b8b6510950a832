//go:build unix

package mapfile

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"
	"unsafe"

	"github.com/btfembed/btfembed/internal/regfile"
)

// Mapped is the files one run of a command maps into memory with Map
// instead of reading them, and checks on their behalf: Guard turns a
// fault on their memory into an error, and Unchanged says whether they
// still hold what was mapped.
//
// Mapping is for a command that reads a kernel's BTF once and exits
// (btfembed min, distill, relocate, inspect). On a machine that charges
// for every fresh page, as virtual machines do, reading a 4-5 MB kernel
// into new memory and making the first pass over it costs more than
// everything else the command does: a mapping of the file's cached pages
// costs a sixth of that (docs/performance.md). The price is that the
// bytes are not a copy:
//
//   - A mapping is never unmapped, because what is parsed from it (type
//     names, in errors too) points into it. It lasts as long as the
//     process, which is why only a command that exits after one run maps.
//   - A file truncated while it is mapped makes its lost pages fault,
//     which Guard turns into an error naming the file.
//   - A file written in place while it is mapped changes under the
//     parser. Unchanged catches that by its size and modification time, as
//     tar's "file changed as we read it" does, so a command checks it
//     before it writes what it computed. (A read is not a snapshot either:
//     a writer racing a read tears it, without a trace.) A file replaced
//     by another (a rename over it) does not disturb the mapping of the
//     one that was there.
//
// The zero Mapped is ready to use. It is not safe for concurrent use.
type Mapped struct {
	files []mapping
}

// mapping is one mapped file and what fstat said of it when it was
// mapped. file stays open for Unchanged's fstat, which sees the file
// that was mapped even after a rename replaced it at path.
type mapping struct {
	path  string
	file  *os.File
	data  []byte
	size  int64
	mtime time.Time
}

// Map returns the contents of path, checked as regfile.ReadFile checks it, mapped
// read-only for the rest of the process (see Mapped). The bytes must not
// be written. A file that cannot be mapped (an empty one, or one in a file
// system without mmap, such as /sys/kernel/btf/vmlinux on older kernels)
// is read with regfile.ReadFile instead.
func (m *Mapped) Map(path string, limit int64) ([]byte, error) {
	f, fi, err := regfile.Open(path, limit)
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		f.Close()
		return regfile.ReadFile(path, limit)
	}
	m.files = append(m.files, mapping{path: path, file: f, data: data, size: size, mtime: fi.ModTime()})
	return data, nil
}

// Guard runs f with faults on mapped memory turned into panics (see
// debug.SetPanicOnFault), and returns a fault on the memory of one of
// m's files as an error naming the file. Other panics go on. Every use of
// the bytes Map returned must be inside f, on f's goroutine.
func (m *Mapped) Guard(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if fault, ok := r.(interface{ Addr() uintptr }); ok {
			if path, off, ok := m.holding(fault.Addr()); ok {
				err = fmt.Errorf("%s: changed while in use: byte %d is gone (the file was truncated) or unreadable", path, off)
				return
			}
		}
		panic(r)
	}()
	return f()
}

// holding returns the path of the mapped file whose memory holds addr,
// and addr's offset in it.
func (m *Mapped) holding(addr uintptr) (string, uintptr, bool) {
	for _, f := range m.files {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(f.data)))
		if addr >= start && addr-start < uintptr(len(f.data)) {
			return f.path, addr - start, true
		}
	}
	return "", 0, false
}

// Unchanged returns an error naming the first mapped file whose size or
// modification time is no longer what it was when it was mapped: it was
// written while in use, and what was computed from it may mix old and new
// bytes.
func (m *Mapped) Unchanged() error {
	for _, f := range m.files {
		fi, err := f.file.Stat()
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		if fi.Size() != f.size || !fi.ModTime().Equal(f.mtime) {
			return fmt.Errorf("%s: changed while in use (%d bytes modified %s, now %d bytes modified %s)",
				f.path, f.size, f.mtime.Format(time.RFC3339Nano), fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		}
	}
	return nil
}

// Package regfile reads files whose path comes from outside the program
// (a corpus, a host root) without trusting what is there: only a regular
// file is read, never one larger than the caller's limit, and never in a
// way that can block on a FIFO or device. It uses the standard library
// only, so the agent-side runtime can link it; package mapfile maps such
// a file instead, for a command that reads one kernel and exits.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrTooLarge is wrapped by the error for a file over the limit.
var ErrTooLarge = errors.New("larger than the cap")

// ReadFile reads path whole if it is a regular file of at most limit
// bytes. It opens the file non-blocking and checks it with fstat before
// reading, so a FIFO is refused rather than waited on, and a file over the
// limit is refused before anything is allocated; a file that grows while
// it is read is cut off at limit+1 bytes and refused too.
func ReadFile(path string, limit int64) ([]byte, error) {
	return readFile(path, limit, 0)
}

// readFile is ReadFile with more flags for the open.
func readFile(path string, limit int64, flags int) ([]byte, error) {
	f, fi, err := open(path, limit, flags)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readAll(io.LimitReader(f, limit+1), fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than %d KiB: %w", path, limit>>10, ErrTooLarge)
	}
	return b, nil
}

// Open opens path as ReadFile does and returns the file and what fstat
// said of it (a regular file of at most limit bytes), for a caller that
// reads it into memory of its own (internal/btfload reads kernel BTF
// straight into cilium/ebpf's buffer) or maps it (internal/mapfile, which
// keeps its modification time). The caller reads at most fi.Size() bytes
// and closes the file.
func Open(path string, limit int64) (f *os.File, fi os.FileInfo, err error) {
	return open(path, limit, 0)
}

// open is Open with more flags for the open.
func open(path string, limit int64, flags int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > limit {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %d bytes, more than %d KiB: %w", path, fi.Size(), limit>>10, ErrTooLarge)
	}
	return f, fi, nil
}

// readAll is io.ReadAll into a buffer sized for the size fstat gave, one
// byte over so that end of file is seen without growing it. io.ReadAll
// grows from 512 bytes by doubling: for a 5 MB kernel BTF that allocated
// about twice the file and held two copies at once while growing, which
// was a third of the peak memory of "btfembed min". A file that grew
// since fstat still reads whole, by append's growth.
func readAll(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

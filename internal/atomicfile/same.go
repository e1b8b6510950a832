package atomicfile

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"os"

	"github.com/btfembed/btfembed/internal/regfile"
)

// sameWriter is what an Add's function writes to. While the bytes match
// the file already at the target, it only reads the target along with
// them; at the first byte that differs, or past the target's end, it
// creates the temporary file, copies the matching prefix into it from the
// target, and writes everything after to it. A file written whole without
// a difference, the usual output of a go:generate that changed nothing,
// never gets a temporary file: the target keeps its bytes, its inode and
// its modification time, and the run skips the write and the two fsyncs
// of a replacement. The comparison reads the target in step with the
// writes, so it holds no more of either in memory than a write does.
type sameWriter struct {
	target *os.File      // the file at the path; nil once diverged, or if none
	rd     *bufio.Reader // over target
	// matched is how many bytes of the target the writes so far equal.
	matched int64
	scratch []byte
	create  func() (*os.File, error)
	tmp     *os.File // the temporary file, once diverged
}

// newSameWriter compares with the regular file at path, if one is there
// to read, and calls create for the temporary file when it must write.
// The open (regfile.OpenNoFollow) neither follows a symlink nor waits on a
// FIFO put there since the caller checked the path: anything but a
// regular file is not compared with, and Commit refuses it.
func newSameWriter(path string, create func() (*os.File, error)) (*sameWriter, error) {
	w := &sameWriter{create: create}
	if f, _, err := regfile.OpenNoFollow(path, math.MaxInt64); err == nil {
		w.target, w.rd = f, bufio.NewReaderSize(f, 32<<10)
		return w, nil
	}
	var err error
	if w.tmp, err = create(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *sameWriter) Write(p []byte) (int, error) {
	if w.tmp == nil && w.matches(p) {
		w.matched += int64(len(p))
		return len(p), nil
	}
	if err := w.diverge(); err != nil {
		return 0, err
	}
	return w.tmp.Write(p)
}

// matches reads len(p) more bytes of the target and tells whether they
// equal p.
func (w *sameWriter) matches(p []byte) bool {
	for len(p) > 0 {
		n := min(len(p), 32<<10)
		if cap(w.scratch) < n {
			w.scratch = make([]byte, 32<<10)
		}
		b := w.scratch[:n]
		if _, err := io.ReadFull(w.rd, b); err != nil || !bytes.Equal(b, p[:n]) {
			return false
		}
		p = p[n:]
	}
	return true
}

// diverge creates the temporary file, if not done yet, holding the
// target's first matched bytes.
func (w *sameWriter) diverge() error {
	if w.tmp != nil {
		return nil
	}
	tmp, err := w.create()
	if err != nil {
		return err
	}
	w.tmp = tmp
	if _, err := io.Copy(tmp, io.NewSectionReader(w.target, 0, w.matched)); err != nil {
		return err
	}
	w.target.Close()
	w.target, w.rd = nil, nil
	return nil
}

// finish ends the writing: it returns the temporary file to commit, or
// nil when the target already holds exactly what was written. The
// unchanged target is fsynced, as a replacement would have been: its
// bytes may still be only in the page cache.
func (w *sameWriter) finish() (*os.File, error) {
	if w.tmp == nil {
		if _, err := w.rd.ReadByte(); errors.Is(err, io.EOF) {
			err := w.target.Sync()
			w.target.Close()
			w.target = nil
			return nil, err
		}
		if err := w.diverge(); err != nil { // the target is longer
			return nil, err
		}
	}
	return w.tmp, nil
}

// close releases what the writer holds after a failure.
func (w *sameWriter) close() {
	if w.target != nil {
		w.target.Close()
	}
	if w.tmp != nil {
		w.tmp.Close()
	}
}

package encode

import (
	"bytes"
	"sync"

	"github.com/klauspost/compress/flate"
)

// encoder is the one DEFLATE compressor of a Write, at the best level,
// switched between dictionaries with ResetDict so that its tables are
// allocated once per Write rather than once per stream, and kept in
// compressors between Writes.
//
// klauspost/compress's flate and not the standard library's: both write
// streams that compress/flate reads, but the standard library's output
// may change with the Go release that builds btfembed, and a payload's
// bytes must depend only on btfembed's own version (go.mod pins
// klauspost/compress), or regenerating with another toolchain would
// rewrite every committed payload.
type encoder struct {
	w    *flate.Writer
	dict []byte // the dictionary the compressor holds
}

// compressors keeps best-level compressors between Writes: allocating
// and clearing one's tables was a third of an identical generate rerun,
// which writes a one-kernel payload per cached kernel to check it
// against the runtime's budget (generator's withinBudget).
var compressors sync.Pool

func newEncoder() (*encoder, error) {
	if w, ok := compressors.Get().(*flate.Writer); ok {
		return reuse(w), nil
	}
	w, err := flate.NewWriter(nil, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	return &encoder{w: w}, nil
}

// reuse is the encoder of a compressor a Write used before. Reset alone
// would keep the dictionary of its last ResetDict, and compress against
// it.
func reuse(w *flate.Writer) *encoder {
	w.ResetDict(nil, nil)
	return &encoder{w: w}
}

// close hands the compressor back for the next Write.
func (e *encoder) close() {
	compressors.Put(e.w)
	e.w = nil
}

// with compresses src against dictionary content dict, or without a
// dictionary if dict is nil. DEFLATE refers back at most 32 KiB, so only
// a dictionary's last 32 KiB count; DefaultMaxDictSize keeps within that.
func (e *encoder) with(dict, src []byte) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(src)/2 + 64)
	if sameSlice(dict, e.dict) {
		e.w.Reset(&out)
	} else {
		e.w.ResetDict(&out, dict)
		e.dict = dict
	}
	if _, err := e.w.Write(src); err != nil {
		return nil, err
	}
	if err := e.w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// plain compresses each of srcs on its own, without a dictionary.
func (e *encoder) plain(srcs ...[]byte) ([][]byte, error) {
	frames := make([][]byte, len(srcs))
	for i, src := range srcs {
		f, err := e.with(nil, src)
		if err != nil {
			return nil, err
		}
		frames[i] = f
	}
	return frames, nil
}

// sameSlice reports whether a and b are the same elements in memory, not
// merely equal ones: a dictionary is identified by its content slice, an
// object's program list by the slice its predictions share.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

package encode

import (
	"bytes"

	"github.com/klauspost/compress/zstd"
)

// encoder is the one zstd encoder of a Write, at the payload's settings:
// the best level, with raw dictionary content or none.
//
// Memory and time bound its design. klauspost/compress sizes a
// best-level encoder's match tables for any input, not for ours (a few KB
// to a few hundred KB): 34 MiB for the tables, 34 MiB more for their
// state with a dictionary, and an 8 MiB window, about 76 MiB in all.
// Making one per dictionary cost most of Write's time, and each left that
// much garbage behind. So a Write makes one, always in dictionary mode,
// and switches its dictionary with ResetWithOptions, which keeps the
// tables: "no dictionary" is the empty dictionary numbered 0, whose frames
// are byte for byte the frames of an encoder without one (no dictionary ID
// is written for 0, and empty history matches nothing), and a switched
// encoder's frames are those of a fresh encoder with that dictionary.
// Frames are written through the streaming path (Write and Close, with
// the content size set) rather than EncodeAll: ResetWithOptions builds the
// streaming encoder's tables, and EncodeAll would build a second set for
// itself, doubling the peak; both paths give the same bytes.
// TestEncoderSwitch holds both. Switching between dictionary mode and
// none would make the library build new tables, so it never happens. The
// settings are those the bytes depend on: any other level or table size
// gives other bytes; the lower-memory option changes only how buffers are
// sized.
type encoder struct {
	enc  *zstd.Encoder
	id   uint32 // the dictionary the encoder holds
	dict []byte
}

// noDict is the empty dictionary content that stands for none.
var noDict = []byte{}

// settings are the options the payload's bytes depend on.
func settings() []zstd.EOption {
	return []zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedBestCompression),
		zstd.WithEncoderCRC(false), // the payload has its own checksum
		zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true),
	}
}

func newEncoder() (*encoder, error) {
	enc, err := zstd.NewWriter(nil, append(settings(), zstd.WithEncoderDictRaw(0, noDict))...)
	if err != nil {
		return nil, err
	}
	return &encoder{enc: enc, dict: noDict}, nil
}

// close releases the encoder's tables to the collector.
func (e *encoder) close() {
	e.enc.Close()
	e.enc = nil
}

// with compresses src against dictionary content dict numbered dictID
// (zstd's dictionary ID, payload's dictionary index + 1), or without a
// dictionary if dict is nil.
func (e *encoder) with(dictID uint32, dict, src []byte) ([]byte, error) {
	if dict == nil {
		dictID, dict = 0, noDict
	}
	var out bytes.Buffer
	out.Grow(len(src)/2 + 64)
	if dictID != e.id || !sameSlice(dict, e.dict) {
		if err := e.enc.ResetWithOptions(&out, zstd.WithEncoderDictRaw(dictID, dict)); err != nil {
			return nil, err
		}
		e.id, e.dict = dictID, dict
	}
	e.enc.ResetContentSize(&out, int64(len(src)))
	if _, err := e.enc.Write(src); err != nil {
		return nil, err
	}
	if err := e.enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// plain compresses each of srcs on its own, without a dictionary.
func (e *encoder) plain(srcs ...[]byte) ([][]byte, error) {
	frames := make([][]byte, len(srcs))
	for i, src := range srcs {
		f, err := e.with(0, nil, src)
		if err != nil {
			return nil, err
		}
		frames[i] = f
	}
	return frames, nil
}

// sameSlice reports whether a and b are the same bytes in memory, not
// merely equal ones: a dictionary is identified by its content slice.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

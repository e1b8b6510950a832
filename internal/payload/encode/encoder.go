package encode

import (
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// encoder is a zstd encoder at the payload's settings: the best level,
// with raw dictionary content or none.
//
// Memory bounds the encoder's design. klauspost/compress sizes a
// best-level encoder's match tables for any input, not for ours (a few KB
// to a few hundred KB): 34 MiB for the tables, 34 MiB more for their
// state after a dictionary (rebuilt for each dictionary), and an 8 MiB
// window, about 76 MiB in all. Write keeps one encoder alive at a
// time and collects it as soon as it is done (release), so the encoding
// step peaks at one encoder plus the blobs and their frames, however many
// kernels and dictionaries there are. Without that, every dictionary left
// an encoder's worth of garbage behind, and a run's peak memory grew with
// the number of dictionaries, so with the corpus, until the collector
// caught up. The settings are those the bytes depend on: any other level
// or table size gives other bytes; the lower-memory option changes only
// how buffers are sized.
type encoder struct {
	*zstd.Encoder
}

// newEncoder returns an encoder with dictionary content dict numbered
// dictID (zstd's dictionary ID, payload's dictionary index + 1), or
// without a dictionary if dict is nil. The caller must release it.
func newEncoder(dictID uint32, dict []byte) (*encoder, error) {
	opts := []zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedBestCompression),
		zstd.WithEncoderCRC(false), // the payload has its own checksum
		zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true),
	}
	if dict != nil {
		opts = append(opts, zstd.WithEncoderDictRaw(dictID, dict))
	}
	enc, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, err
	}
	return &encoder{enc}, nil
}

// release closes e and collects it: an encoder is tens of MB, which the
// next encoder then reuses instead of adding to the heap.
func (e *encoder) release() {
	e.Close()
	e.Encoder = nil
	runtime.GC()
}

// compressPlain compresses each of srcs on its own, without a dictionary.
func compressPlain(srcs ...[]byte) ([][]byte, error) {
	if len(srcs) == 0 {
		return nil, nil
	}
	enc, err := newEncoder(0, nil)
	if err != nil {
		return nil, err
	}
	defer enc.release()
	frames := make([][]byte, len(srcs))
	for i, src := range srcs {
		frames[i] = enc.EncodeAll(src, nil)
	}
	return frames, nil
}

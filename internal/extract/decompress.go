package extract

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/therootcompany/xz"
	"github.com/ulikunitz/xz/lzma"
)

// Compression formats met in corpora, kernel images and packages.
const (
	FormatNone      = ""
	FormatGzip      = "gzip"
	FormatXZ        = "xz"
	FormatZstd      = "zstd"
	FormatLZ4Legacy = "lz4-legacy"
	FormatLZ4       = "lz4"
	FormatBzip2     = "bzip2"
	FormatLZMA      = "lzma"
	FormatLZO       = "lzo"
)

// MaxDecompressed bounds every decompression: no kernel image, vmlinux or
// module comes close, and a corrupt or hostile input must not exhaust memory.
const MaxDecompressed = 1 << 31

var compressionMagics = []struct {
	format string
	magic  []byte
}{
	{FormatXZ, []byte{0xfd, '7', 'z', 'X', 'Z', 0}},
	{FormatZstd, []byte{0x28, 0xb5, 0x2f, 0xfd}},
	{FormatGzip, []byte{0x1f, 0x8b}},
	{FormatLZ4Legacy, []byte{0x02, 0x21, 0x4c, 0x18}},
	{FormatLZ4, []byte{0x04, 0x22, 0x4d, 0x18}},
	{FormatBzip2, []byte("BZh")},
	{FormatLZO, []byte{0x89, 'L', 'Z', 'O', 0, '\r', '\n', 0x1a, '\n'}},
	// lzma -9 as the kernel build runs it: properties lc=3 lp=0 pb=2, then a
	// little-endian dictionary size; only the first byte and the zero low
	// byte of the size are fixed.
	{FormatLZMA, []byte{0x5d, 0x00}},
}

// SniffCompression names the compression format data starts with, or
// returns FormatNone.
func SniffCompression(data []byte) string {
	for _, m := range compressionMagics {
		if bytes.HasPrefix(data, m.magic) {
			return m.format
		}
	}
	return FormatNone
}

var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(MaxDecompressed))
})

// xzReaders keeps xz decoders for reuse: each holds its dictionary (8 MiB
// for BTFHub's archives), which a new decoder would allocate and fault in
// again for every kernel.
var xzReaders sync.Pool

// newXZReader returns a decoder of r from the pool, or a new one. Return it
// with xzReaders.Put once read.
func newXZReader(r io.Reader) (*xz.Reader, error) {
	if xr, ok := xzReaders.Get().(*xz.Reader); ok {
		if err := xr.Reset(r); err != nil {
			return nil, err
		}
		return xr, nil
	}
	return xz.NewReader(r, 0)
}

// Decompress decodes one whole compressed stream in the given format.
// sizeHint, when positive, presizes the output; for xz, without one, the
// stream's index gives it. Bytes after the end of the stream are ignored
// for xz, gzip and lzma; zstd and lz4 take the input as exactly their
// frames.
func Decompress(data []byte, format string, sizeHint int) ([]byte, error) {
	if format == FormatXZ && sizeHint <= 0 {
		if n, ok := xzSize(data); ok {
			sizeHint = int(n)
		}
	}
	out := make([]byte, 0, min(max(sizeHint, 0), MaxDecompressed))
	var r io.Reader
	switch format {
	case FormatXZ:
		xr, err := newXZReader(bytes.NewReader(data))
		if err != nil {
			return nil, FormatError(FormatXZ, err)
		}
		defer xzReaders.Put(xr)
		xr.Multistream(false)
		r = xr
	case FormatZstd:
		d, err := zstdDecoder()
		if err != nil {
			return nil, FormatError(FormatZstd, err)
		}
		b, err := d.DecodeAll(data, out)
		if err != nil {
			return nil, FormatError(FormatZstd, err)
		}
		return b, nil
	case FormatGzip:
		gr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, FormatError(FormatGzip, err)
		}
		gr.Multistream(false)
		r = gr
	case FormatLZ4Legacy:
		return decompressLZ4Legacy(data, out)
	case FormatLZ4:
		r = lz4.NewReader(bytes.NewReader(data))
	case FormatBzip2:
		r = bzip2.NewReader(bytes.NewReader(data))
	case FormatLZMA:
		lr, err := lzma.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, FormatError(FormatLZMA, err)
		}
		r = lr
	case FormatLZO:
		return decompressLZOP(data, out)
	default:
		return nil, fmt.Errorf("%w: not a known compression", ErrUnknownFormat)
	}
	b, err := readAll(out, io.LimitReader(r, MaxDecompressed+1))
	if err != nil {
		return nil, FormatError(format, err)
	}
	if len(b) > MaxDecompressed {
		return nil, fmt.Errorf("%s: more than %d bytes decompressed", format, MaxDecompressed)
	}
	return b, nil
}

// readAll appends what r yields to out until r ends. It fills out's
// spare capacity first and grows it only when full, so a right size hint
// means one allocation and no copy (bytes.Buffer.ReadFrom grows whenever
// fewer than 512 bytes are spare, copying everything at the very end).
func readAll(out []byte, r io.Reader) ([]byte, error) {
	var probe [1]byte
	for {
		var n int
		var err error
		if len(out) == cap(out) {
			// Full: grow only if there is more.
			n, err = r.Read(probe[:])
			out = append(out, probe[:n]...)
		} else {
			n, err = r.Read(out[len(out):cap(out)])
			out = out[:len(out)+n]
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// lz4LegacyBlock is the uncompressed size of every block but the last in
// the lz4 legacy frame (lz4 -l), the format the kernel build uses.
const lz4LegacyBlock = 8 << 20

// decompressLZ4Legacy decodes an lz4 legacy frame: the magic, then blocks of
// a little-endian 32-bit compressed length and the block. A repeated magic
// starts a new frame. The frame has no end marker: it ends with the input.
func decompressLZ4Legacy(data, out []byte) ([]byte, error) {
	data = data[4:]
	for len(data) > 0 {
		if len(data) < 4 {
			return nil, fmt.Errorf("lz4: truncated block header")
		}
		n := binary.LittleEndian.Uint32(data)
		data = data[4:]
		if n == 0x184c2102 {
			continue
		}
		if uint64(n) > uint64(len(data)) {
			return nil, fmt.Errorf("lz4: block of %d bytes, %d left", n, len(data))
		}
		if len(out)+lz4LegacyBlock > MaxDecompressed {
			return nil, fmt.Errorf("lz4: more than %d bytes decompressed", MaxDecompressed)
		}
		out = growSlice(out, lz4LegacyBlock)
		m, err := lz4.UncompressBlock(data[:n], out[len(out):len(out)+lz4LegacyBlock])
		if err != nil {
			return nil, FormatError(FormatLZ4, err)
		}
		out = out[:len(out)+m]
		data = data[n:]
	}
	return out, nil
}

// growSlice makes room for n more bytes after len(b).
func growSlice(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}

// DecompressReader decodes a compressed stream as it is read, for archives
// too large to hold whole (a package's data.tar).
func DecompressReader(r io.Reader, format string) (io.ReadCloser, error) {
	switch format {
	case FormatNone:
		return io.NopCloser(r), nil
	case FormatXZ:
		xr, err := xz.NewReader(r, 0)
		if err != nil {
			return nil, FormatError(FormatXZ, err)
		}
		return io.NopCloser(xr), nil
	case FormatZstd:
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxDecompressed))
		if err != nil {
			return nil, FormatError(FormatZstd, err)
		}
		return zr.IOReadCloser(), nil
	case FormatGzip:
		gr, err := gzip.NewReader(r)
		if err != nil {
			return nil, FormatError(FormatGzip, err)
		}
		return gr, nil
	case FormatBzip2:
		return io.NopCloser(bzip2.NewReader(r)), nil
	}
	return nil, fmt.Errorf("%w: compression %q of a stream", ErrUnknownFormat, format)
}

// FormatFromExt names the compression a file name's extension says.
func FormatFromExt(name string) string {
	switch {
	case strings.HasSuffix(name, ".xz"):
		return FormatXZ
	case strings.HasSuffix(name, ".zst"):
		return FormatZstd
	case strings.HasSuffix(name, ".gz"):
		return FormatGzip
	case strings.HasSuffix(name, ".bz2"):
		return FormatBzip2
	}
	return FormatNone
}

// FormatError prefixes a decoder's error with the format's name unless the
// decoder already did ("xz: data is truncated or corrupt").
func FormatError(format string, err error) error {
	name, _, _ := strings.Cut(format, "-")
	if strings.HasPrefix(err.Error(), name) {
		return err
	}
	return fmt.Errorf("%s: %w", format, err)
}

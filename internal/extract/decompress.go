package extract

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"fmt"
	"io"
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

// zstdDecoders are reused: a decoder's tables are costly to build.
var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(MaxImage))
	if err != nil {
		panic(err) // only invalid options fail, and these are constant
	}
	return d
}}

// xzReaders keeps xz decoders for reuse: each holds its dictionary (8 MiB
// for BTFHub's archives, at most maxWindow), which a new decoder would
// allocate and fault in again for every kernel.
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
	return xz.NewReader(r, maxWindow)
}

// Decompress decodes one whole compressed stream in the given format into
// at most limit bytes, streamed against the cap and the shared memory
// budget (see readCapped); release gives the bytes back to the budget.
// No size the stream or its container claims presizes anything. Bytes
// after the end of the stream are ignored for xz, gzip and lzma; zstd and
// lz4 take the input as exactly their frames.
func Decompress(data []byte, format string, limit int64) (out []byte, release func(), err error) {
	var r io.Reader
	switch format {
	case FormatXZ:
		xr, err := newXZReader(bytes.NewReader(data))
		if err != nil {
			return nil, nil, formatError(FormatXZ, err)
		}
		defer xzReaders.Put(xr)
		xr.Multistream(false)
		r = xr
	case FormatZstd:
		d := zstdDecoders.Get().(*zstd.Decoder)
		defer zstdDecoders.Put(d)
		if err := d.Reset(bytes.NewReader(data)); err != nil {
			return nil, nil, formatError(FormatZstd, err)
		}
		defer d.Reset(nil)
		r = d
	case FormatGzip:
		gr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, nil, formatError(FormatGzip, err)
		}
		gr.Multistream(false)
		r = gr
	case FormatLZ4Legacy:
		r = &blockReader{next: lz4LegacyBlocks(data)}
	case FormatLZ4:
		r = lz4.NewReader(bytes.NewReader(data))
	case FormatBzip2:
		r = bzip2.NewReader(bytes.NewReader(data))
	case FormatLZMA:
		lr, err := lzma.ReaderConfig{DictCap: maxWindow}.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, nil, formatError(FormatLZMA, err)
		}
		r = lr
	case FormatLZO:
		next, err := lzopBlocks(data)
		if err != nil {
			return nil, nil, err
		}
		r = &blockReader{next: next}
	default:
		return nil, nil, fmt.Errorf("%w: not a known compression", ErrUnknownFormat)
	}
	out, release, err = readCapped(r, limit)
	if err != nil {
		return nil, nil, formatError(format, err)
	}
	return out, release, nil
}

// blockReader turns a decoder that yields whole blocks into an io.Reader.
// next returns the next block (valid until the following call) or io.EOF.
type blockReader struct {
	next    func() ([]byte, error)
	pending []byte
}

func (b *blockReader) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		var err error
		if b.pending, err = b.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// lz4LegacyBlock is the uncompressed size of every block but the last in
// the lz4 legacy frame (lz4 -l), the format the kernel build uses.
const lz4LegacyBlock = 8 << 20

// lz4LegacyBlocks decodes an lz4 legacy frame block by block: the magic,
// then blocks of a little-endian 32-bit compressed length and the block. A
// repeated magic starts a new frame. The frame has no end marker: it ends
// with the input.
func lz4LegacyBlocks(data []byte) func() ([]byte, error) {
	data = data[4:]
	var scratch []byte
	return func() ([]byte, error) {
		for {
			if len(data) == 0 {
				return nil, io.EOF
			}
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
			if scratch == nil {
				scratch = make([]byte, lz4LegacyBlock)
			}
			m, err := lz4.UncompressBlock(data[:n], scratch)
			if err != nil {
				return nil, formatError(FormatLZ4, err)
			}
			data = data[n:]
			return scratch[:m], nil
		}
	}
}

// decompressReader decodes a compressed stream as it is read, for archives
// too large to hold whole (a package's data.tar). Its errors name the
// format (formatError), which the archive reader above passes on.
func decompressReader(r io.Reader, format string) (io.ReadCloser, error) {
	dr, err := newDecompressReader(r, format)
	if err != nil || format == FormatNone {
		return dr, err
	}
	return &namedReader{ReadCloser: dr, format: format}, nil
}

// namedReader prefixes the errors of a decoder other than io.EOF with its
// format: "tar: zstd: CRC check failed" rather than "tar: CRC check
// failed".
type namedReader struct {
	io.ReadCloser
	format string
}

func (n *namedReader) Read(p []byte) (int, error) {
	m, err := n.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = formatError(n.format, err)
	}
	return m, err
}

func newDecompressReader(r io.Reader, format string) (io.ReadCloser, error) {
	switch format {
	case FormatNone:
		return io.NopCloser(r), nil
	case FormatXZ:
		xr, err := xz.NewReader(r, maxWindow)
		if err != nil {
			return nil, formatError(FormatXZ, err)
		}
		return io.NopCloser(xr), nil
	case FormatZstd:
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(MaxImage))
		if err != nil {
			return nil, formatError(FormatZstd, err)
		}
		return zr.IOReadCloser(), nil
	case FormatGzip:
		gr, err := gzip.NewReader(r)
		if err != nil {
			return nil, formatError(FormatGzip, err)
		}
		return gr, nil
	case FormatBzip2:
		return io.NopCloser(bzip2.NewReader(r)), nil
	case FormatLZMA:
		lr, err := lzma.ReaderConfig{DictCap: maxWindow}.NewReader(r)
		if err != nil {
			return nil, formatError(FormatLZMA, err)
		}
		return io.NopCloser(lr), nil
	}
	return nil, fmt.Errorf("%w: compression %q of a stream", ErrUnknownFormat, format)
}

// maxAfterArchive bounds the decompressed bytes read past an archive's
// end (tar's two zero blocks, cpio's TRAILER!!! entry) to reach the end of
// its compressed stream: tar pads the archive to its 10 KiB record (GNU
// tar's default, what dpkg-deb writes), rpm's cpio to 4 bytes. A stream
// going on for more is refused after costing no more than this.
const maxAfterArchive = 1 << 20

// finishStream reads a decompressed stream on from its archive's end to
// the stream's end, at most maxAfterArchive bytes, so that its decoder
// checks what the format carries there: gzip's CRC-32 and size, xz's
// block checks, index and stream footer, zstd's frame checksum, bzip2's
// block and stream CRCs. The archive readers stop at the trailer, and
// without this a stream corrupt or cut short after it read as good, its
// corrupt contents with it. The error names the format.
func finishStream(r io.Reader, format string) error {
	long, err := drainTail(io.Discard, r)
	if err != nil {
		return formatError(format, err) // io.Discard never fails: the decoder's error
	}
	if long {
		return fmt.Errorf("more than %d KiB after the archive's end", maxAfterArchive>>10)
	}
	return nil
}

// drainTail copies what is left of r, past its archive's end, to w, and
// reports whether it went on for more than maxAfterArchive bytes, where
// it stops.
func drainTail(w io.Writer, r io.Reader) (long bool, err error) {
	n, err := io.Copy(w, io.LimitReader(r, maxAfterArchive+1))
	return n > maxAfterArchive, err
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

// formatError prefixes a decoder's error with the format's name unless the
// decoder already did ("xz: data is truncated or corrupt").
func formatError(format string, err error) error {
	name, _, _ := strings.Cut(format, "-")
	if strings.HasPrefix(err.Error(), name) {
		return err
	}
	return fmt.Errorf("%s: %w", format, err)
}

// NewDecompressReader decodes a compressed stream (gzip, xz, zstd, bzip2)
// as it is read, for inputs too large to hold whole (a DWARF vmlinux.xz,
// streamed to disk for pahole).
func NewDecompressReader(r io.Reader, format string) (io.ReadCloser, error) {
	return decompressReader(r, format)
}

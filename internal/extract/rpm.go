package extract

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cavaliergopher/cpio"
	rpmutils "github.com/sassoftware/go-rpmutils"
)

// RPM packages are read with two libraries, chosen by measuring both
// candidates served here on the same packages (docs/corpus.md gives the
// figures and commands):
//
//   - github.com/sassoftware/go-rpmutils reads the lead and the two
//     headers: it is the maintained Go reader of the RPM header format.
//     It allocates what the headers' size fields claim before reading
//     (a 16-byte intro claiming 0x0fffffff tags made it allocate 4 GiB and
//     abort the process) and indexes tag data by unchecked offsets, so
//     RPMHeaderLimits bounds both intros before it runs, the header is
//     charged to the memory budget while it is read, and its panics are
//     recovered.
//   - github.com/cavaliergopher/cpio reads the payload, after this
//     package's own decoders (the caps and windows of decompress.go).
//     go-rpmutils' own payload reader allocates a cpio entry's claimed
//     name size (4 GiB from a crafted entry) and skips an unread entry by
//     allocating its whole size; its zstd decoder is a cgo binding without
//     a window cap. cavaliergopher/cpio bounds names to 4 KiB, streams
//     what it skips, and has no dependencies. It reads the "newc" cpio
//     that rpmbuild writes; the stripped format rpm uses only for
//     packages holding a file of 4 GiB or more is refused.
//
// Both declare a go directive (1.21, 1.17) below the module's other
// dependencies'.

// RPM header limits, after rpm's own (lib/header.c, hdrblobVerifyLengths):
// a signature header has at most 32 tags, a main header at most 65,535.
// rpm accepts up to 64 MiB of signature data and 256 MiB of main header
// data; real kernel packages carry a few KB of signatures and at most a
// few MB of header (file lists and digests), so the data caps are lower.
const (
	maxRPMSigTags  = 32
	maxRPMSigData  = 1 << 20
	maxRPMTags     = 0xffff
	maxRPMData     = 64 << 20
	rpmLeadSize    = 96
	rpmIntroSize   = 16
	rpmEntrySize   = 16
	rpmHeaderMagic = 0x8eade801
)

// RPMMagic starts every RPM package (the lead).
var RPMMagic = []byte{0xed, 0xab, 0xee, 0xdb}

// RPMHeader holds the header tags of a package that tell its key and how
// to read its payload.
type RPMHeader struct {
	Name, Version, Release, Arch, Vendor string
	// SourceRPM names the source package it was built from
	// ("kernel-5.14.0-427.el9.src.rpm"): the packages of one kernel build
	// (kernel-core, kernel-modules, ...) share it.
	SourceRPM string
	// Compressor is the payload's compression (gzip, xz, zstd, bzip2,
	// lzma), as this package names formats.
	Compressor string
}

// RPM is a package whose headers are read; its payload comes next.
type RPM struct {
	Header RPMHeader
	r      *bufio.Reader
	digest *payloadDigest // nil for a package without one
	read   bool
}

// OpenRPM reads an RPM package's lead and headers, within the limits
// above, and leaves r at the payload.
func OpenRPM(r io.Reader) (*RPM, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	prefix, err := rpmSignature(br)
	if err != nil {
		return nil, err
	}
	il, dl, err := rpmIntro(br, "header", maxRPMTags, maxRPMData)
	if err != nil {
		return nil, err
	}
	// go-rpmutils holds the header data, its table and a copy of both
	// while it reads them.
	l := sharedBudget.lease()
	defer l.close()
	if err := l.acquire(3 * (int64(il)*rpmEntrySize + int64(dl))); err != nil {
		return nil, fmt.Errorf("rpm header: %w", err)
	}
	h, digest, err := readRPMHeader(io.MultiReader(bytes.NewReader(prefix), br))
	if err != nil {
		return nil, err
	}
	if h.Compressor == FormatNone {
		magic, _ := br.Peek(8)
		h.Compressor = SniffCompression(magic)
	}
	return &RPM{Header: h, r: br, digest: digest}, nil
}

// rpmSignature reads the lead and the signature header, whose sizes it
// checks first, and returns their bytes.
func rpmSignature(br *bufio.Reader) ([]byte, error) {
	peek, err := br.Peek(rpmLeadSize)
	if len(peek) < len(RPMMagic) || !bytes.HasPrefix(peek, RPMMagic) {
		return nil, fmt.Errorf("%w: not an RPM package", ErrUnknownFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("rpm lead: %w", noEOF(err))
	}
	lead := bytes.Clone(peek)
	if _, err := br.Discard(rpmLeadSize); err != nil {
		return nil, err
	}
	il, dl, err := rpmIntro(br, "signature header", maxRPMSigTags, maxRPMSigData)
	if err != nil {
		return nil, err
	}
	// The signature header is padded to a multiple of 8 bytes.
	n := rpmIntroSize + int(il)*rpmEntrySize + (int(dl)+7)/8*8
	sig := make([]byte, rpmLeadSize+n)
	copy(sig, lead)
	if _, err := io.ReadFull(br, sig[rpmLeadSize:]); err != nil {
		return nil, fmt.Errorf("rpm signature header: %w", noEOF(err))
	}
	return sig, nil
}

// rpmIntro peeks at a header's intro (magic, reserved, tag count, data
// size) and checks the counts against the limits.
func rpmIntro(br *bufio.Reader, what string, maxTags, maxData uint32) (il, dl uint32, err error) {
	intro, err := br.Peek(rpmIntroSize)
	if err != nil {
		return 0, 0, fmt.Errorf("rpm %s: %w", what, noEOF(err))
	}
	if binary.BigEndian.Uint32(intro) != rpmHeaderMagic {
		return 0, 0, fmt.Errorf("rpm %s: bad magic %#x", what, intro[:4])
	}
	il, dl = binary.BigEndian.Uint32(intro[8:]), binary.BigEndian.Uint32(intro[12:])
	if il > maxTags {
		return 0, 0, fmt.Errorf("rpm %s: %d tags, at most %d: %w", what, il, maxTags, ErrTooLarge)
	}
	if dl > maxData {
		return 0, 0, fmt.Errorf("rpm %s: %d bytes of data, at most %d: %w", what, dl, maxData, ErrTooLarge)
	}
	return il, dl, nil
}

// readRPMHeader runs go-rpmutils on headers whose sizes are checked and
// takes the tags it needs, the payload digest among them, turning the
// library's panics on inconsistent tag tables into errors.
func readRPMHeader(r io.Reader) (h RPMHeader, digest *payloadDigest, err error) {
	defer func() {
		if p := recover(); p != nil {
			h, digest, err = RPMHeader{}, nil, fmt.Errorf("rpm header: malformed tag table: %v", p)
		}
	}()
	hdr, err := rpmutils.ReadHeader(r)
	if err != nil {
		return h, nil, fmt.Errorf("rpm header: %w", noEOF(err))
	}
	tag := func(t int) string {
		s, err := hdr.GetString(t)
		if err != nil {
			return ""
		}
		return s
	}
	h = RPMHeader{
		Name: tag(rpmutils.NAME), Version: tag(rpmutils.VERSION), Release: tag(rpmutils.RELEASE),
		Arch: tag(rpmutils.ARCH), Vendor: tag(rpmutils.VENDOR), SourceRPM: tag(rpmutils.SOURCERPM),
	}
	if h.Name == "" {
		return h, nil, errors.New("rpm header: no package name")
	}
	if f := tag(rpmutils.PAYLOADFORMAT); f != "" && f != "cpio" {
		return h, nil, fmt.Errorf("%w: rpm payload format %q", ErrUnknownFormat, f)
	}
	switch c := tag(rpmutils.PAYLOADCOMPRESSOR); c {
	case "":
		// Old packages name none: gzip or uncompressed, sniffed.
	case "gzip", "xz", "zstd", "bzip2", "lzma":
		h.Compressor = c
	default:
		return h, nil, fmt.Errorf("%w: rpm payload compression %q", ErrUnknownFormat, c)
	}
	digest, err = readPayloadDigest(hdr)
	return h, digest, err
}

// walk calls fn with the name, the size the archive claims and the
// contents of each regular file of the payload, in archive order, then
// reads the payload to its end: the compressed stream's checksum
// (finishStream) and the header's payload digest are checked there, and
// an error comes after fn has seen every file. It can be called once.
func (p *RPM) walk(fn func(name string, size int64, r io.Reader) error) error {
	if p.read {
		return errors.New("rpm payload already read")
	}
	p.read = true
	dr, err := decompressReader(p.digest.reader(p.r), p.Header.Compressor)
	if err != nil {
		return fmt.Errorf("rpm payload: %w", err)
	}
	defer dr.Close()
	counted := &countingReader{r: dr}
	cr := cpio.NewReader(counted)
	for {
		// The archive ends with a trailer entry, which Next reports as
		// io.EOF like the end of the stream: a stream that ends where an
		// entry header should start was cut short.
		if _, err := io.Copy(io.Discard, cr); err != nil {
			return fmt.Errorf("rpm payload: %w", noEOF(err))
		}
		before := counted.n
		h, err := cr.Next()
		if errors.Is(err, io.EOF) {
			if counted.n-before < cpioHeaderSize {
				return fmt.Errorf("rpm payload: cpio: %w (no trailer)", io.ErrUnexpectedEOF)
			}
			if err := finishStream(counted, p.Header.Compressor); err != nil {
				return fmt.Errorf("rpm payload: %w", err)
			}
			if err := p.digest.verify(p.r); err != nil {
				return fmt.Errorf("rpm payload: %w", err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("rpm payload: cpio: %w", noEOF(err))
		}
		if !h.Mode.IsRegular() {
			continue
		}
		if err := fn(h.Name, h.Size, cr); err != nil {
			return fmt.Errorf("rpm payload: %w", err)
		}
	}
}

// ReadKernelFiles reads the kernel images and modules of the payload
// (kernel, kernel-core, kernel-modules, kernel-modules-core). Modules are
// decoded by up to workers goroutines while the payload streams on.
func (p *RPM) ReadKernelFiles(workers int) (PackageFiles, error) {
	files := newKernelFiles(workers)
	err := p.walk(files.add)
	found := files.wait()
	if err != nil {
		return PackageFiles{}, err
	}
	return found, nil
}

// cpioHeaderSize is the size of a "newc" cpio entry header, the trailer's
// included.
const cpioHeaderSize = 110

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

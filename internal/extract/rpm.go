package extract

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/cavaliergopher/cpio"
)

// RPM packages are read in two parts, chosen by measuring candidates on
// the same packages (docs/corpus.md gives the figures and commands):
//
//   - the lead and the two headers by this package (rpmheader.go says
//     why by hand): the limits below bound both intros before anything
//     is read, the header is charged to the memory budget and read as
//     its bytes arrive, every index entry is checked before a tag is
//     taken, and the main header is checked against the signature
//     header's digest of it (rpmdigest.go);
//   - the payload by github.com/cavaliergopher/cpio, after this
//     package's own decoders (the caps and windows of decompress.go).
//     go-rpmutils' payload reader, the other candidate, allocates a cpio
//     entry's claimed name size (4 GiB from a crafted entry) and skips an
//     unread entry by allocating its whole size; its zstd decoder is a
//     cgo binding without a window cap. cavaliergopher/cpio bounds names
//     to 4 KiB, streams what it skips, and has no dependencies (its go
//     directive is 1.17). It reads the "newc" cpio that rpmbuild writes;
//     the stripped format rpm uses only for packages holding a file of
//     4 GiB or more is refused.

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
	sig, err := rpmSignature(br)
	if err != nil {
		return nil, err
	}
	intro, err := br.Peek(rpmIntroSize)
	if err != nil {
		return nil, fmt.Errorf("rpm header: %w", noEOF(err))
	}
	il, dl, err := rpmIntro(intro, "header", maxRPMTags, maxRPMData)
	if err != nil {
		return nil, err
	}
	// The header's bytes, twice while they arrive, and its index, whose
	// entries take 32 bytes each in memory.
	size := rpmHeaderSize(il, dl)
	l := sharedBudget.lease()
	defer l.close()
	if err := l.acquire(2*int64(size) + 32*int64(il)); err != nil {
		return nil, fmt.Errorf("rpm header: %w", err)
	}
	b, err := readClaimed(br, size)
	if err != nil {
		return nil, fmt.Errorf("rpm header: %w", err)
	}
	if err := checkHeaderDigest(sig, b); err != nil {
		return nil, err
	}
	tags, err := parseRPMTags(b, "header", maxRPMTags, maxRPMData)
	if err != nil {
		return nil, err
	}
	h, digest, err := readRPMHeader(tags)
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
// checks first, and returns the signature header's tags.
func rpmSignature(br *bufio.Reader) (*rpmTags, error) {
	lead, err := br.Peek(rpmLeadSize)
	if len(lead) < len(RPMMagic) || !bytes.HasPrefix(lead, RPMMagic) {
		return nil, fmt.Errorf("%w: not an RPM package", ErrUnknownFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("rpm lead: %w", noEOF(err))
	}
	if _, err := br.Discard(rpmLeadSize); err != nil {
		return nil, err
	}
	intro, err := br.Peek(rpmIntroSize)
	if err != nil {
		return nil, fmt.Errorf("rpm signature header: %w", noEOF(err))
	}
	il, dl, err := rpmIntro(intro, "signature header", maxRPMSigTags, maxRPMSigData)
	if err != nil {
		return nil, err
	}
	// The signature header is padded to a multiple of 8 bytes.
	sig := make([]byte, rpmHeaderSize(il, (dl+7)/8*8))
	if _, err := io.ReadFull(br, sig); err != nil {
		return nil, fmt.Errorf("rpm signature header: %w", noEOF(err))
	}
	return parseRPMTags(sig, "signature header", maxRPMSigTags, maxRPMSigData)
}

// readRPMHeader takes from the main header's tags those this package
// needs, the payload digest among them.
func readRPMHeader(tags *rpmTags) (h RPMHeader, digest *payloadDigest, err error) {
	for _, f := range []struct {
		tag uint32
		to  *string
	}{
		{rpmTagName, &h.Name}, {rpmTagVersion, &h.Version}, {rpmTagRelease, &h.Release},
		{rpmTagArch, &h.Arch}, {rpmTagVendor, &h.Vendor}, {rpmTagSourceRPM, &h.SourceRPM},
		{rpmTagPayloadCompressor, &h.Compressor},
	} {
		if *f.to, err = tags.firstString(f.tag, true); err != nil {
			return RPMHeader{}, nil, err
		}
	}
	if h.Name == "" {
		return h, nil, errors.New("rpm header: no package name")
	}
	format, err := tags.firstString(rpmTagPayloadFormat, true)
	if err != nil {
		return h, nil, err
	}
	if format != "" && format != "cpio" {
		return h, nil, fmt.Errorf("%w: rpm payload format %q", ErrUnknownFormat, format)
	}
	switch h.Compressor {
	case "":
		// Old packages name none: gzip or uncompressed, sniffed.
	case "gzip", "xz", "zstd", "bzip2", "lzma":
	default:
		return h, nil, fmt.Errorf("%w: rpm payload compression %q", ErrUnknownFormat, h.Compressor)
	}
	digest, err = readPayloadDigest(tags)
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

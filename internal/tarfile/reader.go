package tarfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const blockSize = 512

// TypeReg is the typeflag of a regular file, the one member type callers
// look for.
const TypeReg = '0'

// The other member types, the header's typeflag byte: Next reads them to
// know which members have no data.
const (
	typeLink     = '1'
	typeSymlink  = '2'
	typeChar     = '3'
	typeBlock    = '4'
	typeDir      = '5'
	typeFifo     = '6'
	typeRegOld   = '\x00' // pre-POSIX regular file
	typePAX      = 'x'    // pax extended header for the next member
	typePAXGlob  = 'g'    // pax global header
	typeLongName = 'L'    // GNU: the next member's name
	typeLongLink = 'K'    // GNU: the next member's link target
)

// maxMeta bounds an extended header or a GNU long name: they hold a few
// names and numbers, and the size field is untrusted.
const maxMeta = 1 << 20

// ErrHeader is wrapped by the errors of a header that is not a tar header.
var ErrHeader = errors.New("invalid tar header")

// Header describes a member.
type Header struct {
	Name     string
	Typeflag byte
	// Size is the number of data bytes: 0 for members that have none
	// (directories, links, devices, FIFOs).
	Size int64
}

// Reader reads the members of an archive in turn.
type Reader struct {
	r      io.Reader
	remain int64 // data bytes of the current member not read yet
	pad    int64 // padding after them, to the next block
	block  [blockSize]byte
}

// NewReader reads the archive in r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// Next skips the rest of the current member and returns the next one's
// header; io.EOF at the end of the archive, which is the end-of-archive
// block or the end of r between members.
func (tr *Reader) Next() (*Header, error) {
	if _, err := io.CopyN(io.Discard, tr.r, tr.remain); err != nil {
		return nil, noEOF(err)
	}
	// An archive cut in the padding after the last member's data is
	// taken as ended there, as archive/tar takes it.
	if _, err := io.ReadFull(tr.r, tr.block[:tr.pad]); err != nil {
		return nil, eofOr(err)
	}
	tr.remain, tr.pad = 0, 0
	var (
		name    string // from a GNU long name or pax path
		paxSize = int64(-1)
	)
	for {
		if _, err := io.ReadFull(tr.r, tr.block[:]); err != nil {
			return nil, err // io.EOF exactly between headers
		}
		b := tr.block[:]
		if allZero(b) {
			// The end: two zero blocks, or one and the end of r.
			if _, err := io.ReadFull(tr.r, tr.block[:]); err != nil {
				return nil, err
			}
			if !allZero(b) {
				return nil, fmt.Errorf("%w: a header after a zero block", ErrHeader)
			}
			return nil, io.EOF
		}
		if err := checkSum(b); err != nil {
			return nil, err
		}
		size, err := parseNumber(b[124:136])
		if err != nil {
			return nil, fmt.Errorf("%w: size: %v", ErrHeader, err)
		}
		h := &Header{Name: cString(b[0:100]), Typeflag: b[156], Size: size}
		if string(b[257:263]) == "ustar\x00" {
			if prefix := cString(b[345:500]); prefix != "" {
				h.Name = prefix + "/" + h.Name
			}
		}
		switch h.Typeflag {
		case typeLongName, typeLongLink, typePAX, typePAXGlob:
			meta, err := tr.readMeta(size)
			if err == io.EOF {
				return nil, err
			}
			if err != nil {
				return nil, fmt.Errorf("extended header: %w", err)
			}
			switch h.Typeflag {
			case typeLongName:
				name = cString(meta)
			case typePAX:
				if err := parsePAX(meta, &name, &paxSize); err != nil {
					return nil, err
				}
			}
			continue
		case typeRegOld:
			h.Typeflag = TypeReg
			if strings.HasSuffix(h.Name, "/") {
				h.Typeflag = typeDir
			}
		}
		if name != "" {
			h.Name = name
		}
		if paxSize >= 0 {
			h.Size = paxSize
		}
		switch h.Typeflag {
		case typeLink, typeSymlink, typeChar, typeBlock, typeDir, typeFifo:
			h.Size = 0
		}
		tr.remain, tr.pad = h.Size, -h.Size&(blockSize-1)
		return h, nil
	}
}

// Read reads the current member's data.
func (tr *Reader) Read(p []byte) (int, error) {
	if tr.remain == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > tr.remain {
		p = p[:tr.remain]
	}
	n, err := tr.r.Read(p)
	tr.remain -= int64(n)
	if err == io.EOF && tr.remain > 0 {
		err = io.ErrUnexpectedEOF
	} else if err == io.EOF {
		err = nil
	}
	return n, err
}

// readMeta reads the data of an extended header whole, and its padding;
// io.EOF if the archive ends in the padding, as for a member's.
func (tr *Reader) readMeta(size int64) ([]byte, error) {
	if size > maxMeta {
		return nil, fmt.Errorf("%w: %d bytes", ErrHeader, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(tr.r, b); err != nil {
		return nil, noEOF(err)
	}
	if _, err := io.ReadFull(tr.r, tr.block[:-size&(blockSize-1)]); err != nil {
		return nil, eofOr(err)
	}
	return b, nil
}

// parsePAX reads the records "<length> <key>=<value>\n" of a pax extended
// header and keeps path and size.
func parsePAX(b []byte, name *string, size *int64) error {
	for len(b) > 0 {
		lenField, _, ok := bytes.Cut(b, []byte(" "))
		n, err := strconv.Atoi(string(lenField))
		if !ok || err != nil || n <= len(lenField)+1 || n > len(b) || b[n-1] != '\n' {
			return fmt.Errorf("%w: bad pax record", ErrHeader)
		}
		rec := b[len(lenField)+1 : n-1]
		b = b[n:]
		key, value, ok := bytes.Cut(rec, []byte("="))
		if !ok {
			return fmt.Errorf("%w: bad pax record", ErrHeader)
		}
		switch string(key) {
		case "path":
			*name = string(value)
		case "size":
			v, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("%w: pax size %q", ErrHeader, value)
			}
			*size = v
		}
	}
	return nil
}

// checkSum verifies the header's checksum: the sum of its bytes with the
// checksum field taken as spaces. Old tars summed signed bytes.
func checkSum(b []byte) error {
	want, err := parseNumber(b[148:156])
	if err != nil {
		return fmt.Errorf("%w: checksum: %v", ErrHeader, err)
	}
	var unsigned, signed int64
	for i, c := range b {
		if 148 <= i && i < 156 {
			c = ' '
		}
		unsigned += int64(c)
		signed += int64(int8(c))
	}
	if want != unsigned && want != signed {
		return fmt.Errorf("%w: checksum mismatch", ErrHeader)
	}
	return nil
}

// parseNumber reads a numeric field: octal digits, padded with spaces or
// NULs, or, the GNU extension for large values, base-256 big-endian
// behind a set high bit.
func parseNumber(b []byte) (int64, error) {
	if len(b) > 0 && b[0]&0x80 != 0 {
		if b[0]&0x40 != 0 {
			return 0, errors.New("negative base-256 number")
		}
		var v int64
		for i, c := range b {
			if i == 0 {
				c &= 0x7f
			}
			if v>>55 != 0 {
				return 0, errors.New("base-256 number overflows")
			}
			v = v<<8 | int64(c)
		}
		return v, nil
	}
	s := strings.Trim(string(b), " \x00")
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 8, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad octal number %q", s)
	}
	return v, nil
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// eofOr turns a short read into io.EOF and keeps other errors.
func eofOr(err error) error {
	if err == io.ErrUnexpectedEOF {
		return io.EOF
	}
	return err
}

// noEOF turns the end of input inside an archive into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

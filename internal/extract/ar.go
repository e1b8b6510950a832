package extract

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/btfembed/btfembed/internal/pathelem"
)

// ArMagic starts a Unix ar archive, the outer format of .deb packages.
const ArMagic = "!<arch>\n"

// arReader reads the members of an ar archive in order (the common format of
// deb(5): 60-byte headers, sizes in decimal, members padded to even length).
// It is written here because neither the standard library nor a maintained
// module reads ar, and without it no .deb can be imported; the tar members
// inside are read with archive/tar.
type arReader struct {
	r      *bufio.Reader
	remain int64 // unread bytes of the current member
	pad    bool  // the current member is followed by a padding byte
}

func newArReader(r io.Reader) (*arReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic := make([]byte, len(ArMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != ArMagic {
		return nil, fmt.Errorf("%w: not an ar archive", ErrUnknownFormat)
	}
	return &arReader{r: br}, nil
}

// Next skips to the next member and returns its name and size; the member's
// data is then read from the arReader. It returns io.EOF after the last.
func (a *arReader) Next() (string, int64, error) {
	if _, err := io.CopyN(io.Discard, a.r, a.remain); err != nil {
		return "", 0, fmt.Errorf("ar: truncated member: %w", noEOF(err))
	}
	if a.pad {
		if _, err := a.r.ReadByte(); err != nil && !errors.Is(err, io.EOF) {
			return "", 0, fmt.Errorf("ar: %w", err)
		}
	}
	a.remain, a.pad = 0, false
	var h [60]byte
	n, err := io.ReadFull(a.r, h[:])
	if n == 0 && errors.Is(err, io.EOF) {
		return "", 0, io.EOF
	}
	if err != nil {
		return "", 0, fmt.Errorf("ar: truncated header: %w", noEOF(err))
	}
	if string(h[58:60]) != "`\n" {
		return "", 0, errors.New("ar: bad member header")
	}
	name := strings.TrimRight(string(bytes.TrimRight(h[0:16], " ")), "/")
	size, err := strconv.ParseInt(strings.TrimSpace(string(h[48:58])), 10, 64)
	if err != nil || size < 0 {
		return "", 0, fmt.Errorf("ar: member %q: bad size %q", name, bytes.TrimSpace(h[48:58]))
	}
	if err := pathelem.Validate(name); err != nil {
		return "", 0, fmt.Errorf("ar: member name: %w", err)
	}
	a.remain, a.pad = size, size%2 == 1
	return name, size, nil
}

func (a *arReader) Read(p []byte) (int, error) {
	if a.remain <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), a.remain)]
	n, err := a.r.Read(p)
	a.remain -= int64(n)
	if errors.Is(err, io.EOF) && a.remain > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// noEOF turns a plain EOF in the middle of a structure into ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

package tarfile

import (
	"fmt"
	"io"
	"strconv"
)

// WriteFile writes an archive of one regular file, name with the given
// permission bits and data, in the ustar format with no owner and time 0:
// the bytes depend on the arguments only. They are the bytes archive/tar
// writes for that header. The name must fit the 100-byte name field.
func WriteFile(w io.Writer, name string, mode int64, data []byte) error {
	if name == "" || len(name) > 100 {
		return fmt.Errorf("tar member name %q: want 1 to 100 bytes", name)
	}
	if mode < 0 || mode > 0o7777 {
		return fmt.Errorf("tar member %s: mode %o out of range", name, mode)
	}
	var h [blockSize]byte
	copy(h[0:100], name)
	putOctal(h[100:108], mode)
	putOctal(h[108:116], 0) // uid
	putOctal(h[116:124], 0) // gid
	if int64(len(data)) >= 1<<33 {
		return fmt.Errorf("tar member %s: %d bytes, ustar's limit is 8 GiB", name, len(data))
	}
	putOctal(h[124:136], int64(len(data)))
	putOctal(h[136:148], 0) // mtime
	h[156] = TypeReg
	copy(h[257:265], "ustar\x0000")
	putOctal(h[329:337], 0) // devmajor
	putOctal(h[337:345], 0) // devminor
	var sum int64
	for i, c := range h {
		if 148 <= i && i < 156 {
			c = ' '
		}
		sum += int64(c)
	}
	putOctal(h[148:155], sum)
	h[155] = ' '

	pad := -int64(len(data)) & (blockSize - 1)
	for _, b := range [][]byte{h[:], data, make([]byte, pad+2*blockSize)} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// putOctal writes v as zero-padded octal digits filling the field but for
// a final NUL.
func putOctal(field []byte, v int64) {
	s := strconv.FormatInt(v, 8)
	n := len(field) - 1
	for i := range n {
		field[i] = '0'
	}
	copy(field[n-len(s):n], s)
	field[n] = 0
}

// Package pathelem checks strings read from untrusted input before they
// name a file or directory: a kernel release, distribution, version or
// architecture from an image banner, a package's control file or
// os-release becomes a corpus path, and must not leave the corpus root.
package pathelem

import (
	"errors"
	"fmt"
)

// ErrUnsafe is wrapped by Validate's errors.
var ErrUnsafe = errors.New("not a safe path element")

// MaxLen is the longest string Validate accepts, in bytes. A file name
// holds at most 255 bytes (NAME_MAX), and a corpus names files after the
// element with more around it: a kernel file's temporary name is
// ".<release>.btf.tar.xz.btfembed-<pid>-<random>.tmp", 46 bytes more. A
// longer release used to pass, and the write failed the whole import
// ("file name too long") instead of skipping the one input. 128 refuses no
// real string: uname's release is at most 64 bytes (__NEW_UTS_LEN), a
// module name 55 (MODULE_NAME_LEN on 64-bit), distribution IDs and
// versions a few.
const MaxLen = 128

// quoteLen is how much of an over-long string an error quotes.
const quoteLen = 40

// Validate checks that s, a release, distribution, version or
// architecture string read from untrusted input (an image banner, a
// package's control file, os-release), can name one directory or file: it
// is not empty, not "." or "..", at most MaxLen bytes, and holds only
// ASCII letters, digits and . - _ + ~ (every character seen in
// distribution kernel releases, and no separator, space or control
// character). Every place that turns such a string into a path element
// calls it, so no path built from file contents leaves its root or fails
// to be created.
func Validate(s string) error {
	if s == "" || s == "." || s == ".." {
		return fmt.Errorf("%q: %w", s, ErrUnsafe)
	}
	if len(s) > MaxLen {
		return fmt.Errorf("%q... (%d bytes): longer than %d bytes: %w", s[:quoteLen], len(s), MaxLen, ErrUnsafe)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '-', c == '_', c == '+', c == '~':
		default:
			return fmt.Errorf("%q: byte %#x at %d: %w", s, c, i, ErrUnsafe)
		}
	}
	return nil
}

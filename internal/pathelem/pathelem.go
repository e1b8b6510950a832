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

// Validate checks that s, a release, distribution, version or
// architecture string read from untrusted input (an image banner, a
// package's control file, os-release), can name one directory or file: it
// is not empty, not "." or "..", and holds only ASCII letters, digits and
// . - _ + ~ (every character seen in distribution kernel releases, and no
// separator, space or control character). Every place that turns such a
// string into a path element calls it, so no path built from file contents
// leaves its root.
func Validate(s string) error {
	if s == "" || s == "." || s == ".." {
		return fmt.Errorf("%q: %w", s, ErrUnsafe)
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

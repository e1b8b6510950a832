package extract

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// DebFiles calls fn, in archive order, with the path (relative, as in
// "boot/vmlinuz-6.1.0-50-cloud-amd64") and contents of each regular file of
// a Debian package's data.tar that want accepts. It is how tests take a
// kernel image and its modules out of a package to boot them.
func DebFiles(r io.Reader, want func(path string) bool, fn func(path string, data []byte) error) error {
	ar, err := newArReader(r)
	if err != nil {
		return err
	}
	for {
		name, _, err := ar.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: package without data.tar", ErrUnknownFormat)
		}
		if err != nil {
			return err
		}
		if !strings.HasPrefix(name, "data.tar") {
			continue
		}
		if err := debDataFiles(ar, FormatFromExt(name), want, fn); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
}

func debDataFiles(r io.Reader, format string, want func(string) bool, fn func(string, []byte) error) error {
	return walkDebData(r, format, func(name string, size int64, r io.Reader) error {
		p := memberPath(name)
		if !want(p) {
			return nil
		}
		b, release, err := readMember(name, size, r)
		if err != nil {
			return err
		}
		err = fn(p, b)
		release()
		return err
	})
}

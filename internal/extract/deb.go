package extract

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// DebControl holds the fields of a package's control file that tell the key.
type DebControl struct {
	Package, Version, Architecture string
}

// DebContents is what a kernel package holds that a corpus needs.
type DebContents struct {
	Control DebControl
	PackageFiles
}

// ReadDeb reads a Debian package (deb(5): an ar archive with debian-binary,
// control.tar.* and data.tar.*) in one pass. Modules are decoded by up to
// workers goroutines while the archive streams on.
func ReadDeb(r io.Reader, workers int) (*DebContents, error) {
	var c DebContents
	err := readDebArchive(r, &c.Control, func(data io.Reader, format string) error {
		return readDebData(data, format, workers, &c)
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// readDebArchive walks a package's ar members: the control file is read
// into *control, and data reads data.tar, which must be there.
func readDebArchive(r io.Reader, control *DebControl, data func(r io.Reader, format string) error) error {
	ar, err := newArReader(r)
	if err != nil {
		return err
	}
	sawData := false
	for {
		name, _, err := ar.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(name, "control.tar"):
			if *control, err = readDebControl(ar, FormatFromExt(name)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		case strings.HasPrefix(name, "data.tar"):
			if err := data(ar, FormatFromExt(name)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			sawData = true
		}
	}
	if !sawData {
		return fmt.Errorf("%w: package without data.tar", ErrUnknownFormat)
	}
	return nil
}

// readDebControl reads the control file of control.tar, and the tarball
// and its compressed stream on to their ends: the stream's checksum is
// there (finishStream).
func readDebControl(r io.Reader, format string) (DebControl, error) {
	var c DebControl
	dr, err := decompressReader(r, format)
	if err != nil {
		return c, err
	}
	defer dr.Close()
	found := false
	tr := tar.NewReader(dr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, fmt.Errorf("tar: %w", err)
		}
		if found || path.Clean(strings.TrimPrefix(h.Name, "./")) != "control" {
			continue
		}
		if c, err = parseDebControl(tr); err != nil {
			return c, err
		}
		found = true
	}
	if !found {
		return c, errors.New("no control file")
	}
	return c, finishStream(dr, format)
}

// parseDebControl takes the fields DebControl holds from a control file
// (deb-control(5)), at most its first MiB.
func parseDebControl(r io.Reader) (DebControl, error) {
	var c DebControl
	s := bufio.NewScanner(io.LimitReader(r, 1<<20))
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok || strings.HasPrefix(k, " ") {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Package":
			c.Package = v
		case "Version":
			c.Version = v
		case "Architecture":
			c.Architecture = v
		}
	}
	return c, s.Err()
}

// walkDebData decompresses a package's data.tar and calls fn with each
// regular file, named as in the archive, with the size the archive claims
// and a reader of its bytes, in the archive's order; the stream is then
// read to its end and checked (finishStream).
func walkDebData(r io.Reader, format string, fn func(name string, size int64, r io.Reader) error) error {
	dr, err := decompressReader(r, format)
	if err != nil {
		return err
	}
	defer dr.Close()
	tr := tar.NewReader(dr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return finishStream(dr, format)
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := fn(h.Name, h.Size, tr); err != nil {
			return err
		}
	}
}

func readDebData(r io.Reader, format string, workers int, c *DebContents) error {
	files := newKernelFiles(workers)
	defer files.wait()
	if err := walkDebData(r, format, files.add); err != nil {
		return err
	}
	found := files.wait()
	c.Images = append(c.Images, found.Images...)
	c.Modules = append(c.Modules, found.Modules...)
	return nil
}

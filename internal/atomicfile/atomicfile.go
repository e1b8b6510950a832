package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFile replaces the file at path with data, as Write does.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write replaces the file at path with what fn writes. fn writes to a
// temporary file beside path (".<name>.*.tmp"), which is made 0644, synced
// and renamed over path only when fn and every step succeed. On any error
// the temporary file is removed and a file already at path is left as it
// was. Errors name path.
func Write(path string, fn func(io.Writer) error) error {
	tmp, err := writeTemp(path, fn)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// File is one file of WriteFiles.
type File struct {
	Path string
	Data []byte
}

// WriteFiles replaces several files together: all are written to
// temporary files first, and only when every one is written are they
// renamed into place, in order. A failure before the renames leaves every
// path as it was.
func WriteFiles(files []File) error {
	var tmps []string
	defer func() {
		for _, t := range tmps {
			os.Remove(t) // after a rename there is nothing left to remove
		}
	}()
	for _, f := range files {
		tmp, err := writeTemp(f.Path, func(w io.Writer) error {
			_, err := w.Write(f.Data)
			return err
		})
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], f.Path); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	return nil
}

// writeTemp writes what fn writes to a synced 0644 temporary file beside
// path and returns its name; on error it leaves nothing behind.
func writeTemp(path string, fn func(io.Writer) error) (_ string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err := fn(f); err != nil {
		return "", err
	}
	if err := f.Chmod(0o644); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

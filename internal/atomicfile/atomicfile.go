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
func Write(path string, fn func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err := fn(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

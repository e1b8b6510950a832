package atomicfile

import (
	"io"
)

// WriteFile replaces the file at path with data, as Write does.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write replaces the file at path with what fn writes: a Set of one file.
// On any error a file already at path is left as it was. Errors name path.
func Write(path string, fn func(io.Writer) error) error {
	var s Set
	if err := s.Add(path, fn); err != nil {
		s.Abort()
		return err
	}
	return s.Commit()
}

// File is one file of WriteFiles: Data, or what Write writes when it is
// set (a large file need not be in memory whole).
type File struct {
	Path  string
	Data  []byte
	Write func(io.Writer) error
}

// WriteFiles replaces several files together: a Set of them, added in
// order. kept names those that already held their bytes (Set.Kept).
func WriteFiles(files []File) (kept []string, err error) {
	var s Set
	defer s.Abort()
	for _, f := range files {
		add := func() error { return s.AddBytes(f.Path, f.Data) }
		if f.Write != nil {
			add = func() error { return s.Add(f.Path, f.Write) }
		}
		if err := add(); err != nil {
			return nil, err
		}
	}
	return s.Kept(), s.Commit()
}

//go:build !unix

package mapfile

import "github.com/btfembed/btfembed/internal/regfile"

// Mapped reads files where they cannot be mapped (see mapped_unix.go):
// Map is regfile.ReadFile, and there is nothing for Guard and Unchanged to check.
type Mapped struct{}

// Map reads path with regfile.ReadFile.
func (m *Mapped) Map(path string, limit int64) ([]byte, error) { return regfile.ReadFile(path, limit) }

// Guard runs f.
func (m *Mapped) Guard(f func() error) error { return f() }

// Unchanged returns nil: read files are copies.
func (m *Mapped) Unchanged() error { return nil }

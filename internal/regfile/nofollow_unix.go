//go:build unix

package regfile

import (
	"os"
	"syscall"
)

// OpenNoFollow is Open for a path that is refused if it is a symlink
// rather than followed: an output path about to be compared with what
// would be written there (internal/atomicfile), or a file of an earlier
// run about to be removed (btfembed's outputs), where something put in
// its place must be neither waited on nor read through.
func OpenNoFollow(path string, limit int64) (*os.File, os.FileInfo, error) {
	return open(path, limit, syscall.O_NOFOLLOW)
}

// ReadFileNoFollow is ReadFile for a path that is refused if it is a
// symlink (the open fails with ELOOP) rather than followed: a file an
// operator names (the runtime's BTF file), so that what is read is the
// file named.
func ReadFileNoFollow(path string, limit int64) ([]byte, error) {
	return readFile(path, limit, syscall.O_NOFOLLOW)
}

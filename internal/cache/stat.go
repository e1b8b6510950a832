package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// racyWindow is how recent a modification may be for a file's digest not
// to be indexed: within it, a second write could leave every stat field
// as it was.
const racyWindow = 2 * time.Second

// fileID is what the stat index compares: a file with the same path and
// fileID is taken to have the same contents.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
}

func (f fileID) String() string {
	return fmt.Sprintf("%d %d %d %d %d", f.dev, f.ino, f.size, f.mtime, f.ctime)
}

// FileDigest returns the SHA-256 of the contents of the file at path,
// from the stat index when the file is unchanged since it was last
// hashed (see the package doc).
func (c *Cache) FileDigest(path string) (Key, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Key{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Key{}, err
	}
	id := statID(st)
	index := NewKey([]byte("stat"), []byte(abs))
	if data, ok := c.get(index, statSuffix); ok {
		if sid, sum, ok := strings.Cut(string(data), "\n"); ok && sid == id.String() {
			var k Key
			if n, err := hex.Decode(k[:], []byte(sum)); err == nil && n == len(k) {
				return k, nil
			}
		}
	}
	k, err := hashFile(abs)
	if err != nil {
		return Key{}, err
	}
	// Index only what was stable before and after hashing, and old
	// enough that a later write must change the modification time.
	if st2, err := os.Stat(abs); err == nil && statID(st2) == id && c.now().Sub(st.ModTime()) > racyWindow {
		c.put(index, statSuffix, []byte(id.String()+"\n"+k.String()))
	}
	return k, nil
}

func hashFile(path string) (Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return Key{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return Key{}, fmt.Errorf("hash %s: %w", path, err)
	}
	var k Key
	h.Sum(k[:0])
	return k, nil
}

// basicID is what os.FileInfo tells on every platform.
func basicID(st os.FileInfo) fileID {
	return fileID{size: st.Size(), mtime: st.ModTime().UnixNano()}
}

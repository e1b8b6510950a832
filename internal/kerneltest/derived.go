package kerneltest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/btfembed/btfembed/internal/atomicfile"
)

// Derived returns what derive makes from the file input, cached across
// processes like the testdata kernels (see readArchive): in a file of the
// test cache named by the digest of input's contents and by what, which
// says what derive makes from it ("btfhub-debian-12.btf.tar.xz"), so two
// derivations of one input do not share an entry. It is for results that
// cost tens of seconds, such as BTF that pahole makes from a kernel's
// DWARF. derive runs only on a miss; its error is returned as it is.
func Derived(input, what string, derive func() ([]byte, error)) ([]byte, error) {
	sum, err := fileDigest(input)
	if err != nil {
		return nil, err
	}
	cached := filepath.Join(derivedDir(), sum+"-"+what)
	if b, err := os.ReadFile(cached); err == nil {
		return b, nil
	}
	b, err := derive()
	if err != nil {
		return nil, err
	}
	// The cache only saves time: a failure to write it is no test failure.
	if os.MkdirAll(filepath.Dir(cached), 0o755) == nil {
		_ = atomicfile.WriteFile(cached, b)
	}
	return b, nil
}

// derivedDir holds Derived's results, beside the testdata kernels (a
// variable, so that its test caches elsewhere).
var derivedDir = func() string { return filepath.Join(filepath.Dir(cacheDir()), "derived") }

// fileDigest is the hex SHA-256 of a file's contents, read as a stream:
// inputs may be debug packages of hundreds of MB.
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

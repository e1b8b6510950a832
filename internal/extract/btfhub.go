package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/btfembed/btfembed/internal/tarfile"
)

// BTFHubArchive returns the raw BTF inside a BTFHub archive file: an xz
// compressed tar holding one regular member <release>.btf.
func BTFHubArchive(data []byte) ([]byte, error) {
	tarball, release, err := Decompress(data, FormatXZ, MaxImage)
	if err != nil {
		return nil, err
	}
	defer release()
	return TarMemberBTF(tarball)
}

// IsTar tells whether data starts with a POSIX tar header ("ustar" at 257).
func IsTar(data []byte) bool { return HasPrefixAt(data, 257, []byte("ustar")) }

// TarMemberBTF returns the one regular member of a tarball whose name ends
// in .btf. Two such members are an error: which is the kernel's would be a
// guess.
func TarMemberBTF(tarball []byte) ([]byte, error) {
	tr := tarfile.NewReader(bytes.NewReader(tarball))
	members := 0
	var (
		btf  []byte
		name string
	)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("tar: %w", err)
		}
		members++
		if h.Typeflag != tarfile.TypeReg || !strings.HasSuffix(h.Name, ".btf") {
			continue
		}
		if btf != nil {
			return nil, fmt.Errorf("tarball has two .btf members, %s and %s", name, h.Name)
		}
		if btf, err = ReadAllLimit(tr, MaxBTF); err != nil {
			return nil, fmt.Errorf("tar member %s: %w", h.Name, err)
		}
		name = h.Name
	}
	switch {
	case btf != nil:
		return btf, nil
	case members == 0:
		return nil, fmt.Errorf("%w: empty tarball", ErrNoBTF)
	}
	return nil, fmt.Errorf("%w: tarball has no .btf member", ErrNoBTF)
}

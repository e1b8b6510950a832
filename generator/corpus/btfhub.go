package corpus

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/btfembed/btfembed/internal/extract"
)

// btfhubSuffix ends every kernel file of the BTFHub-archive layout.
const btfhubSuffix = ".btf.tar.xz"

// isTar tells whether data is a tar archive: it starts with a POSIX tar
// header ("ustar" at 257) or is an empty archive, blocks of zeros ending
// in the two that end every archive.
func isTar(data []byte) bool {
	if extract.HasPrefixAt(data, 257, []byte("ustar")) {
		return true
	}
	const block = 512
	return len(data) >= 2*block && len(data)%block == 0 && !slices.ContainsFunc(data[:2*block], func(b byte) bool { return b != 0 })
}

// tarMemberBTF returns the one regular member of a tarball whose name ends
// in .btf. Two such members are an error: which is the kernel's would be a
// guess.
func tarMemberBTF(tarball []byte) ([]byte, error) {
	tr := tar.NewReader(bytes.NewReader(tarball))
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
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".btf") {
			continue
		}
		if btf != nil {
			return nil, fmt.Errorf("tarball has two .btf members, %s and %s", name, h.Name)
		}
		if btf, err = extract.ReadAllLimit(tr, extract.MaxBTF); err != nil {
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

// writeBTFHub writes raw BTF as a BTFHub archive file: xz(tar(<release>.btf)).
// The output depends only on its inputs: the tar header carries no time,
// owner or host name.
func writeBTFHub(w io.Writer, release string, btf []byte) error {
	xw, err := xz.WriterConfig{}.NewWriter(w)
	if err != nil {
		return fmt.Errorf("xz: %w", err)
	}
	if err := WriteBTFHubTar(xw, release, btf); err != nil {
		return err
	}
	if err := xw.Close(); err != nil {
		return fmt.Errorf("xz: %w", err)
	}
	return nil
}

// WriteBTFHubTar writes the tarball inside a BTFHub archive file: one
// regular member <release>.btf, mode 0644, in the ustar format with no
// owner and time 0, so the bytes depend on the arguments only.
func WriteBTFHubTar(w io.Writer, release string, btf []byte) error {
	tw := tar.NewWriter(w)
	h := &tar.Header{Typeflag: tar.TypeReg, Name: release + ".btf", Mode: 0o644, Size: int64(len(btf)),
		ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	if _, err := tw.Write(btf); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	return nil
}

// Package btfhub reads and writes the files of BTFHub's archive layout:
// <release>.btf.tar.xz, an xz-compressed tarball whose one regular member
// <release>.btf is the raw vmlinux BTF. The corpus reader
// (internal/corpus) and the tool that derives benchmark corpora
// (internal/cmd/benchcorpus) share it, so that neither depends on the
// other.
package btfhub

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/btfembed/btfembed/internal/extract"
)

// Read returns the raw BTF inside a .btf.tar.xz file's bytes.
func Read(data []byte) ([]byte, error) {
	tarball, release, err := extract.Decompress(data, extract.FormatXZ, extract.MaxImage)
	if err != nil {
		return nil, err
	}
	defer release()
	return ReadTar(tarball)
}

// IsTar tells whether data is a tar archive: it starts with a POSIX tar
// header ("ustar" at 257) or is an empty archive, blocks of zeros ending
// in the two that end every archive.
func IsTar(data []byte) bool {
	if extract.HasPrefixAt(data, 257, []byte("ustar")) {
		return true
	}
	const block = 512
	return len(data) >= 2*block && len(data)%block == 0 && !slices.ContainsFunc(data[:2*block], func(b byte) bool { return b != 0 })
}

// ReadTar returns the one regular member of a tarball whose name ends
// in .btf. Two such members are an error: which is the kernel's would be a
// guess.
//
// The BTF returned shares tarball's memory where the member is stored
// there as tar reads it (see member).
func ReadTar(tarball []byte) ([]byte, error) {
	r := bytes.NewReader(tarball)
	tr := tar.NewReader(r)
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
		if btf, err = member(tr, tarball, len(tarball)-r.Len(), h.Size); err != nil {
			return nil, fmt.Errorf("tar member %s: %w", h.Name, err)
		}
		name = h.Name
	}
	switch {
	case btf != nil:
		return btf, nil
	case members == 0:
		return nil, fmt.Errorf("%w: empty tarball", extract.ErrNoBTF)
	}
	return nil, fmt.Errorf("%w: tarball has no .btf member", extract.ErrNoBTF)
}

// member returns the contents of tr's current member, of size bytes,
// which tar found at offset off of tarball (tar reads tarball): the
// slice of tarball that holds them, or a copy where they are not stored
// as read (a sparse file).
//
// A BTFHub archive's member is a whole kernel's BTF, which the corpus
// reader hands on and drops: a copy is 4-5 MB of fresh memory per kernel,
// and on a 12-kernel .btf.tar.xz run the copies took a third of the page
// faults (docs/performance.md). The member is still read through tr,
// into a small buffer compared with the slice, so tar checks it as before
// and a member whose bytes differ from what is stored is seen.
func member(tr *tar.Reader, tarball []byte, off int, size int64) ([]byte, error) {
	if size > extract.MaxBTF {
		return nil, fmt.Errorf("more than %d MiB: %w", extract.MaxBTF>>20, extract.ErrTooLarge)
	}
	if size < 0 || int64(len(tarball)-off) < size {
		return extract.ReadAllLimit(tr, extract.MaxBTF)
	}
	stored := tarball[off : off+int(size)]
	var buf [32 << 10]byte
	for at := 0; ; {
		n, err := tr.Read(buf[:])
		if n > len(stored)-at || !bytes.Equal(buf[:n], stored[at:at+n]) {
			// Not stored as read: copy what was read and the rest.
			rest, rerr := extract.ReadAllLimit(tr, extract.MaxBTF-int64(at+n))
			if rerr != nil {
				return nil, rerr
			}
			return slices.Concat(stored[:at], buf[:n], rest), nil
		}
		at += n
		if errors.Is(err, io.EOF) {
			return stored[:at], nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// WriteTar writes the tarball inside a BTFHub archive file: one
// regular member <release>.btf, mode 0644, in the ustar format with no
// owner and time 0, so the bytes depend on the arguments only.
func WriteTar(w io.Writer, release string, btf []byte) error {
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

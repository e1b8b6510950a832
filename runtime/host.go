package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/osrelease"
	"github.com/btfembed/btfembed/internal/regfile"
)

// maxOSRelease bounds how much of an os-release file is read: real ones
// are a few hundred bytes.
const maxOSRelease = 64 << 10

// host is what Select learns about the running system.
type host struct {
	key Key
	// idLike is os-release's ID_LIKE: distributions to fall back on, in
	// order, when no embedded entry names the host's own ID.
	idLike []string
	// osReleaseErr is why os-release could not be read, if it could not.
	// It only matters when the embedded entries of the release differ by
	// distribution; a selection that does not need it succeeds.
	osReleaseErr error
}

// hostInfo describes the running kernel: architecture and release from
// uname, distribution from os-release under root, each unless overridden.
func hostInfo(opts *SelectOptions) (host, error) {
	h := host{key: Key{Arch: opts.Arch, Release: opts.Release, Distro: opts.Distro, Version: opts.Version}}
	if h.key.Arch == "" || h.key.Release == "" {
		var u unix.Utsname
		if err := unix.Uname(&u); err != nil {
			return host{}, fmt.Errorf("uname: %w", err)
		}
		if h.key.Arch == "" {
			h.key.Arch = unix.ByteSliceToString(u.Machine[:])
		}
		if h.key.Release == "" {
			h.key.Release = unix.ByteSliceToString(u.Release[:])
		}
	}
	h.key.Arch, _ = kernelkey.NormalizeArch(h.key.Arch)
	if h.key.Distro == "" && h.key.Version == "" {
		rel, err := readOSRelease(opts.HostRoot)
		h.key.Distro, h.key.Version, h.idLike, h.osReleaseErr = rel.ID, rel.VersionID, rel.IDLike, err
	}
	return h, nil
}

// readOSRelease reads root/etc/os-release, or root/usr/lib/os-release as
// os-release(5) prescribes. A system without either gives the zero value
// and no error; one that cannot be read (not a regular file, unreadable)
// gives an error naming the file.
func readOSRelease(root string) (osrelease.Release, error) {
	for _, p := range []string{"etc/os-release", "usr/lib/os-release"} {
		path := filepath.Join(rootDir(root), p)
		b, err := regfile.ReadFile(path, maxOSRelease)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return osrelease.Release{}, fmt.Errorf("os-release: %w", err)
		}
		return osrelease.Parse(b), nil
	}
	return osrelease.Release{}, nil
}

// sameID says whether two os-release IDs are one, but for case. An ID is
// ASCII (os-release(5) allows 0-9, a-z, '.', '_' and '-'), so case is
// ASCII case: strings.EqualFold and strings.ToLower would bring Unicode's
// case tables into every agent (docs/performance.md).
func sameID(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func rootDir(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

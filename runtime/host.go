package runtime

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hostKey describes the running kernel: architecture and release from
// uname, distribution from os-release under root, each unless overridden.
func hostKey(opts *SelectOptions) (Key, error) {
	k := Key{Arch: opts.Arch, Release: opts.Release, Distro: opts.Distro, Version: opts.Version}
	if k.Arch == "" || k.Release == "" {
		var u unix.Utsname
		if err := unix.Uname(&u); err != nil {
			return Key{}, fmt.Errorf("uname: %w", err)
		}
		if k.Arch == "" {
			k.Arch = unix.ByteSliceToString(u.Machine[:])
		}
		if k.Release == "" {
			k.Release = unix.ByteSliceToString(u.Release[:])
		}
	}
	k.Arch, _ = NormalizeArch(k.Arch)
	if k.Distro == "" && k.Version == "" {
		id, version, err := readOSRelease(opts.HostRoot)
		if err != nil {
			return Key{}, err
		}
		k.Distro, k.Version = id, version
	}
	return k, nil
}

// readOSRelease returns ID and VERSION_ID from root/etc/os-release, or
// root/usr/lib/os-release as os-release(5) prescribes. A system without
// either file gives empty strings.
func readOSRelease(root string) (id, version string, err error) {
	for _, p := range []string{"etc/os-release", "usr/lib/os-release"} {
		path := filepath.Join(rootDir(root), p)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("read os-release: %w", err)
		}
		id, version := parseOSRelease(b)
		return id, version, nil
	}
	return "", "", nil
}

// parseOSRelease extracts ID and VERSION_ID from os-release content: lines
// of KEY=value, values optionally quoted shell-style.
func parseOSRelease(b []byte) (id, version string) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			if val[0] == '"' {
				if uq, err := strconv.Unquote(val); err == nil {
					val = uq
				} else {
					val = val[1 : len(val)-1]
				}
			} else {
				val = val[1 : len(val)-1]
			}
		}
		switch key {
		case "ID":
			id = val
		case "VERSION_ID":
			version = val
		}
	}
	return id, version
}

func rootDir(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

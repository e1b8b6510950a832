package extract

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// DWARFFile is a file with DWARF that a debug package holds, streamed to
// disk.
type DWARFFile struct {
	Release string // the kernel's release, from the member's path
	Name    string // module name; "" for a vmlinux
	Path    string // member path inside the package
	File    string // where it was streamed to
}

// DebDWARF is what a kernel debug package (linux-image-<release>-dbg,
// Ubuntu's -dbgsym) holds that a corpus needs.
type DebDWARF struct {
	Control DebControl
	VMLinux []DWARFFile
	Modules []DWARFFile
}

// IsDebugPackage tells whether a package is a debug symbols package, by
// its name as Debian (-dbg) and Ubuntu (-dbgsym) build them.
func IsDebugPackage(c DebControl) bool {
	return strings.HasSuffix(c.Package, "-dbg") || strings.HasSuffix(c.Package, "-dbgsym")
}

// ReadDebControl reads only a package's control file, which comes before
// its data: enough to tell a debug package from a kernel package.
func ReadDebControl(r io.Reader) (DebControl, error) {
	ar, err := newArReader(r)
	if err != nil {
		return DebControl{}, err
	}
	for {
		name, _, err := ar.Next()
		if errors.Is(err, io.EOF) {
			return DebControl{}, fmt.Errorf("%w: package without control.tar", ErrUnknownFormat)
		}
		if err != nil {
			return DebControl{}, err
		}
		if strings.HasPrefix(name, "control.tar") {
			c, err := readDebControl(ar, FormatFromExt(name))
			if err != nil {
				return DebControl{}, fmt.Errorf("%s: %w", name, err)
			}
			return c, nil
		}
	}
}

// debugVMLinuxPath returns the release of a debug vmlinux member:
// usr/lib/debug/boot/vmlinux-<release> or
// usr/lib/debug/lib/modules/<release>/vmlinux.
func debugVMLinuxPath(p string) (string, bool) {
	if rel, ok := strings.CutPrefix(p, "usr/lib/debug/boot/vmlinux-"); ok && rel != "" && !strings.Contains(rel, "/") {
		return rel, true
	}
	if rest, ok := strings.CutPrefix(p, "usr/lib/debug/lib/modules/"); ok {
		if rel, ok := strings.CutSuffix(rest, "/vmlinux"); ok && rel != "" && !strings.Contains(rel, "/") {
			return rel, true
		}
	}
	return "", false
}

// debugModulePath returns the release and module name of a debug module
// member: usr/lib/debug/lib/modules/<release>/.../<name>.ko.
func debugModulePath(p string) (release, name string, ok bool) {
	rest, ok := strings.CutPrefix(p, "usr/lib/debug/lib/modules/")
	if !ok {
		return "", "", false
	}
	release, rest, ok = strings.Cut(rest, "/")
	if !ok || release == "" {
		return "", "", false
	}
	name, ok = strings.CutSuffix(path.Base(rest), ".ko")
	if !ok || name == "" {
		return "", "", false
	}
	return release, name, true
}

// ReadDebDWARF reads a kernel debug package in one pass and streams its
// debug vmlinux files and, unless noModules, its debug modules into dir,
// under names of its own (never the members' paths), within the caps
// MaxDWARFFile and MaxDWARFTotal. Nothing of them is held in memory.
func ReadDebDWARF(r io.Reader, dir string, noModules bool) (*DebDWARF, error) {
	ar, err := newArReader(r)
	if err != nil {
		return nil, err
	}
	var d DebDWARF
	sawData := false
	for {
		name, _, err := ar.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch {
		case strings.HasPrefix(name, "control.tar"):
			if d.Control, err = readDebControl(ar, FormatFromExt(name)); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		case strings.HasPrefix(name, "data.tar"):
			if err := readDebDWARFData(ar, FormatFromExt(name), dir, noModules, &d); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			sawData = true
		}
	}
	if !sawData {
		return nil, fmt.Errorf("%w: package without data.tar", ErrUnknownFormat)
	}
	return &d, nil
}

func readDebDWARFData(r io.Reader, format, dir string, noModules bool, d *DebDWARF) error {
	dr, err := decompressReader(r, format)
	if err != nil {
		return err
	}
	defer dr.Close()
	var q DiskQuota
	tr := tar.NewReader(dr)
	for n := 0; ; {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := path.Clean(strings.TrimPrefix(strings.TrimPrefix(h.Name, "./"), "/"))
		f := DWARFFile{Path: p}
		var list *[]DWARFFile
		if rel, ok := debugVMLinuxPath(p); ok {
			f.Release, list = rel, &d.VMLinux
		} else if rel, name, ok := debugModulePath(p); ok && !noModules {
			f.Release, f.Name, list = rel, name, &d.Modules
		} else {
			continue
		}
		f.File = filepath.Join(dir, strconv.Itoa(n)+".elf")
		n++
		got, err := q.StreamToFile(f.File, tr)
		if err != nil {
			return fmt.Errorf("tar member %s: %w", h.Name, err)
		}
		if got != h.Size {
			return fmt.Errorf("tar member %s: %w", h.Name, io.ErrUnexpectedEOF)
		}
		*list = append(*list, f)
	}
}

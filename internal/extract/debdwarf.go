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
// member: usr/lib/debug/lib/modules/<release>/.../<name>.ko, or
// <name>.ko.debug as RPM debuginfo packages name them.
func debugModulePath(p string) (release, name string, ok bool) {
	rest, ok := strings.CutPrefix(p, "usr/lib/debug/lib/modules/")
	if !ok {
		return "", "", false
	}
	release, rest, ok = strings.Cut(rest, "/")
	if !ok || release == "" {
		return "", "", false
	}
	base := strings.TrimSuffix(path.Base(rest), ".debug")
	name, ok = strings.CutSuffix(base, ".ko")
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
	var d DebDWARF
	err := readDebArchive(r, &d.Control, func(data io.Reader, format string) error {
		return readDebDWARFData(data, format, dir, noModules, &d)
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

func readDebDWARFData(r io.Reader, format, dir string, noModules bool, d *DebDWARF) error {
	dr, err := decompressReader(r, format)
	if err != nil {
		return err
	}
	defer dr.Close()
	files := dwarfFiles{dir: dir, noModules: noModules}
	tr := tar.NewReader(dr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			d.VMLinux, d.Modules = files.vmlinux, files.modules
			return nil
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := files.add(h.Name, h.Size, tr); err != nil {
			return err
		}
	}
}

// dwarfFiles streams the debug vmlinux files and modules of a package to
// disk as its archive streams, under names of its own.
type dwarfFiles struct {
	dir       string
	noModules bool
	quota     DiskQuota
	vmlinux   []DWARFFile
	modules   []DWARFFile
}

// add takes one regular file of the package, named as in the archive,
// with the size the archive claims, if it is a debug vmlinux or module;
// other files are left unread.
func (d *dwarfFiles) add(name string, size int64, r io.Reader) error {
	p := memberPath(name)
	f := DWARFFile{Path: p}
	var list *[]DWARFFile
	if rel, ok := debugVMLinuxPath(p); ok {
		f.Release, list = rel, &d.vmlinux
	} else if rel, mod, ok := debugModulePath(p); ok && !d.noModules {
		f.Release, f.Name, list = rel, mod, &d.modules
	} else {
		return nil
	}
	f.File = filepath.Join(d.dir, strconv.Itoa(len(d.vmlinux)+len(d.modules))+".elf")
	got, err := d.quota.StreamToFile(f.File, r)
	if err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	if got != size {
		return fmt.Errorf("member %s: %w", name, io.ErrUnexpectedEOF)
	}
	*list = append(*list, f)
	return nil
}

package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/btfembed/btfembed/internal/kernelarch"
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

// DWARFOptions says where the reader of a debug package streams its files,
// which, and who hears of each.
type DWARFOptions struct {
	// Dir is where the files are written, under names of their own
	// (never the members' paths).
	Dir string
	// NoModules leaves the modules unread.
	NoModules bool
	// Found, if set, is called with each file once it is whole on disk,
	// in the package's order, so that work on it can start while the rest
	// of the package streams (a debug package takes a minute to unpack);
	// an error it returns ends the read.
	Found func(DWARFFile) error
}

// ReadDebDWARF reads a kernel debug package in one pass and streams its
// debug vmlinux files and, unless o.NoModules, its debug modules into
// o.Dir, within the caps MaxDWARFFile and MaxDWARFTotal. Nothing of them
// is held in memory.
//
// Each file is checked from its first bytes before it is written: an ELF
// file of a kernel's type and of the architecture the control file says
// (which comes before data.tar in a package); a member that is not is an
// error wrapping ErrUnknownFormat, or ErrArchMismatch, naming it.
func ReadDebDWARF(r io.Reader, o DWARFOptions) (*DebDWARF, error) {
	var d DebDWARF
	err := readDebArchive(r, &d.Control, func(data io.Reader, format string) error {
		files := dwarfFiles{DWARFOptions: o,
			claim: archClaim{pkg: d.Control.Package, source: "its control file", arch: d.Control.Architecture}}
		if err := walkDebData(data, format, files.add); err != nil {
			return err
		}
		d.VMLinux, d.Modules = files.vmlinux, files.modules
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// archClaim is the architecture a package says its files are for, which
// its ELF files' machine must agree with: a package saying arm64 and
// holding an x86-64 vmlinux would otherwise make an arm64 kernel of
// x86-64 types.
type archClaim struct {
	pkg    string // the package's name
	source string // where it says its architecture: "its control file"
	arch   string // what it says, in the package's spelling ("amd64")
}

// check refuses an ELF file of another architecture than the claim's,
// or any if the claim names none the kernel knows.
func (c archClaim) check(member string, h elfHead) error {
	if want, ok := kernelarch.Normalize(c.arch); ok && want == h.Arch {
		return nil
	}
	return fmt.Errorf("%w: package %s: %s says architecture %q, member %s is an ELF file for %s (%v)",
		ErrArchMismatch, c.pkg, c.source, c.arch, member, h.Arch, h.Machine)
}

// dwarfFiles streams the debug vmlinux files and modules of a package to
// disk as its archive streams, under names of its own.
type dwarfFiles struct {
	DWARFOptions
	claim   archClaim
	quota   DiskQuota
	vmlinux []DWARFFile
	modules []DWARFFile
}

// add takes one regular file of the package, named as in the archive,
// with the size the archive claims, if it is a debug vmlinux or module;
// other files are left unread. What the file is, an ELF file of the
// package's architecture, is checked from its first bytes before any of
// it is written: a member of zeros that claims 4 GiB is refused after
// elfHeadSize bytes, not after 4 GiB of disk.
func (d *dwarfFiles) add(name string, size int64, r io.Reader) error {
	p := memberPath(name)
	f := DWARFFile{Path: p}
	var list *[]DWARFFile
	if rel, ok := debugVMLinuxPath(p); ok {
		f.Release, list = rel, &d.vmlinux
	} else if rel, mod, ok := debugModulePath(p); ok && !d.NoModules {
		f.Release, f.Name, list = rel, mod, &d.modules
	} else {
		return nil
	}
	var head [elfHeadSize]byte
	n, err := io.ReadFull(r, head[:])
	if err != nil && int64(n) < size {
		return fmt.Errorf("member %s: %w", name, noEOF(err))
	}
	h, err := readELFHead(head[:n])
	if err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	if err := d.claim.check(p, h); err != nil {
		return err
	}
	f.File = filepath.Join(d.Dir, strconv.Itoa(len(d.vmlinux)+len(d.modules))+".elf")
	got, err := d.quota.StreamToFile(f.File, io.MultiReader(bytes.NewReader(head[:n]), r))
	if err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	if got != size {
		return fmt.Errorf("member %s: %w", name, io.ErrUnexpectedEOF)
	}
	*list = append(*list, f)
	if d.Found != nil {
		return d.Found(f)
	}
	return nil
}

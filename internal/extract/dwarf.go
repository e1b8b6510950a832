package extract

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
)

// Caps on the DWARF files streamed to disk for pahole. They bound disk,
// not memory: nothing of them is held in memory.
const (
	// MaxDWARFFile bounds one file: the largest distribution debug
	// vmlinux is under 1 GiB (Debian 6.1 amd64: 588 MB).
	MaxDWARFFile = 4 << 30
	// MaxDWARFTotal bounds the files of one input together: a whole -dbg
	// package with its modules (Debian 6.1 686-pae: about 4 GB).
	MaxDWARFTotal = 32 << 30
)

// ELFFile is what Inspect tells of an ELF file on disk.
type ELFFile struct {
	Arch     string // as elfArch names it, "" for machines without kernel BTF
	HasBTF   bool   // a .BTF section with contents
	HasDWARF bool   // a .debug_info section with contents
	BPF      bool   // ELF machine EM_BPF: a BPF program's object, not a kernel
}

// InspectELF reads the section headers of an ELF file on disk, without
// reading the file whole (a DWARF vmlinux is hundreds of MB).
func InspectELF(f io.ReaderAt) (e ELFFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = ELFFile{}, fmt.Errorf("malformed ELF: %v", r)
		}
	}()
	ef, err := elf.NewFile(f)
	if err != nil {
		return ELFFile{}, fmt.Errorf("malformed ELF: %w", err)
	}
	has := func(name string) bool {
		s := ef.Section(name)
		return s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0
	}
	return ELFFile{Arch: elfArch(ef), HasBTF: has(".BTF"), HasDWARF: has(".debug_info"), BPF: ef.Machine == elf.EM_BPF}, nil
}

// bannerWindow is the unit in which FindBannerFile scans a file, and
// bannerOverlap how much of the previous window it keeps, enough for any
// banner line.
const (
	bannerWindow  = 4 << 20
	bannerOverlap = 4 << 10
)

// FindBannerFile finds the kernel banner (linux_banner) in a vmlinux on
// disk: in .rodata, where init/version.c puts it, else anywhere in the
// file, read in windows so the file is never held whole.
func FindBannerFile(f io.ReaderAt, size int64) (BannerInfo, bool) {
	if b, ok := rodataBanner(f); ok {
		return b, true
	}
	buf := make([]byte, bannerWindow+bannerOverlap)
	keep := 0
	for off := int64(0); off < size; {
		n, err := f.ReadAt(buf[keep:], off)
		if n == 0 {
			return BannerInfo{}, false
		}
		off += int64(n)
		win := buf[:keep+n]
		atEnd := off >= size || err != nil
		// A banner starting in the overlap is found whole in the next
		// window; only the last window is searched to its end.
		search := win
		if !atEnd && len(win) > bannerOverlap {
			search = win[:len(win)-bannerOverlap]
		}
		if i := bannerIndex(search); i >= 0 {
			if b, ok := FindBanner(win[i:]); ok {
				return b, true
			}
		}
		if atEnd {
			return BannerInfo{}, false
		}
		keep = copy(buf, win[len(win)-bannerOverlap:])
	}
	return BannerInfo{}, false
}

// bannerIndex is where the first banner (not a format string) starts.
func bannerIndex(data []byte) int {
	for off := 0; ; {
		i := bytes.Index(data[off:], bannerPrefix)
		if i < 0 {
			return -1
		}
		at := off + i
		off = at + len(bannerPrefix)
		if off < len(data) && data[off] >= '0' && data[off] <= '9' {
			return at
		}
	}
}

func rodataBanner(f io.ReaderAt) (b BannerInfo, ok bool) {
	defer func() {
		if recover() != nil {
			b, ok = BannerInfo{}, false
		}
	}()
	ef, err := elf.NewFile(f)
	if err != nil {
		return BannerInfo{}, false
	}
	s := ef.Section(".rodata")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return BannerInfo{}, false
	}
	data, err := ReadAllLimit(s.Open(), MaxImage)
	if err != nil {
		return BannerInfo{}, false
	}
	return FindBanner(data)
}

// ErrDiskCap is wrapped when files streamed to disk pass MaxDWARFFile or
// MaxDWARFTotal.
var ErrDiskCap = errors.New("more than the cap on files streamed to disk")

// DiskQuota counts the bytes streamed to disk for one input against
// MaxDWARFTotal.
type DiskQuota struct{ used int64 }

// StreamToFile copies r into a new file at path (0600, never an existing
// file), at most MaxDWARFFile bytes and what q has left. A file cut short
// by an error is removed.
func (q *DiskQuota) StreamToFile(path string, r io.Reader) (n int64, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	limit := min(int64(MaxDWARFFile), MaxDWARFTotal-q.used)
	n, err = io.Copy(f, io.LimitReader(r, limit+1))
	q.used += n
	if err != nil {
		return n, err
	}
	if n > limit {
		return n, fmt.Errorf("%w (%d GiB per file, %d GiB per input)", ErrDiskCap, MaxDWARFFile>>30, MaxDWARFTotal>>30)
	}
	return n, nil
}

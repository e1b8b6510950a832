package corpus

import (
	"fmt"
	"io"

	"github.com/btfembed/btfembed/internal/btfhub"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/regfile"
)

// File is the BTF one file holds and what the file tells of its kernel.
type File struct {
	// BTF is raw BTF exactly as the file carries it: a vmlinux's standalone
	// BTF, or a module's split BTF (over its vmlinux, or over Base when
	// Base is set). It is checked for framing only: parse it with
	// btf.LoadSpecFromReader (btf.LoadSplitSpecFromReader over its base
	// for a module) or coremin.NewTarget.
	BTF []byte
	// Base is a module's distilled base BTF, its .BTF.base section (pahole
	// 1.28+ writes one for out-of-tree modules); nil otherwise.
	Base []byte
	// Key is what the file tells: the ELF machine and the kernel banner
	// (vmlinux, kernel images) and, for ReadBTF, the path (the corpus
	// layout, a release in the name, the running kernel for
	// /sys/kernel/btf/vmlinux), which wins. Parts nothing tells are empty.
	Key kernelkey.Key

	keyFrom string // what told Key's distribution and version (told.from)
}

// ReadBTF reads the BTF of one file, whatever form this package
// understands: raw BTF, plain or compressed (.btf, .btf.xz, .btf.zst,
// .btf.gz), a BTFHub archive (<release>.btf.tar.xz), an ELF vmlinux or
// kernel module (.ko, .ko.xz, .ko.zst, .ko.gz; with its distilled base when
// it has one), or a kernel image (bzImage, EFI zboot, Image, Image.gz). The
// contents decide the form, not the name.
//
// Errors name the file and wrap errNoBTF or errUnknownFormat where one
// applies.
func ReadBTF(path string) (*File, error) {
	data, err := regfile.ReadFile(path, extract.MaxImage)
	if err != nil {
		return nil, err
	}
	return ParseBTF(path, data)
}

// ParseBTF is ReadBTF for the contents of the file at path that the
// caller read, or mapped as "btfembed min" does. path names the file in
// errors and gives the Key its part. The File's BTF and Base may share
// data's memory.
func ParseBTF(path string, data []byte) (*File, error) {
	f, err := fileBTF(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Key = inputKey(path).or(told{f.Key, f.keyFrom}).key
	return f, nil
}

// readBTFFromReader is ReadBTF for contents read from r, such as a member
// of an archive; Key holds only what the contents tell.
func readBTFFromReader(r io.Reader) (*File, error) {
	data, err := extract.ReadAllLimit(r, extract.MaxImage)
	if err != nil {
		return nil, err
	}
	return fileBTF(data)
}

// fileBTF finds the BTF in a file's contents: one layer of compression as
// files are shipped, then a BTFHub tarball, ELF, raw BTF or a kernel image.
// It is the one reader that decides what a file is, whatever its name: a
// corpus's <release>.btf.tar.xz goes through it too.
func fileBTF(data []byte) (*File, error) {
	// lzma's magic is too weak to trust on a whole file; extract.FindImageBTF
	// finds it where a kernel image's header names it.
	if format := extract.SniffCompression(data); format != extract.FormatNone && format != extract.FormatLZMA {
		inner, release, err := extract.Decompress(data, format, extract.MaxImage)
		if err != nil {
			return nil, err
		}
		defer release()
		data = inner
	}
	switch {
	case btfhub.IsTar(data): // a BTFHub archive's tarball
		btf, err := btfhub.ReadTar(data)
		if err != nil {
			return nil, err
		}
		return &File{BTF: btf}, nil
	case extract.IsELF(data):
		e, err := extract.ReadELFBTF(data)
		if err != nil {
			return nil, err
		}
		b, _ := extract.FindBanner(data)
		t := bannerTold(e.Arch, b)
		return &File{BTF: e.BTF, Base: e.Base, Key: t.key, keyFrom: t.from}, nil
	case extract.IsRawBTF(data):
		btf, err := extract.RawBTFFile(data)
		if err != nil {
			return nil, err
		}
		return &File{BTF: btf}, nil
	}
	img, err := extract.FindImageBTF(data)
	if err != nil {
		return nil, err
	}
	t := bannerTold(img.Arch, img.Banner)
	return &File{BTF: img.BTF, Key: t.key, keyFrom: t.from}, nil
}

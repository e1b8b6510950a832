package extract

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"strings"
)

// ModuleSuffixes are the file names a module's BTF is read from: the module
// itself as the kernel ships it, or its raw split BTF.
var ModuleSuffixes = []string{
	".ko", ".ko.xz", ".ko.zst", ".ko.gz",
	".btf", ".btf.xz", ".btf.zst", ".btf.gz",
}

// ModuleName returns the module name of a file name ("nf_conntrack" for
// nf_conntrack.ko.xz) and whether the name is one of a module.
func ModuleName(file string) (string, bool) {
	for _, s := range ModuleSuffixes {
		if name, ok := strings.CutSuffix(file, s); ok && name != "" {
			return name, true
		}
	}
	return "", false
}

// ModuleBTF returns the raw split BTF of a module file, whose name says its
// format. The BTF is checked for framing only: validating it needs the base.
//
// A module whose .BTF is split over its own distilled base (.BTF.base) is
// refused: Module.BTF is split BTF over the kernel's vmlinux, as the
// generator minimizes it jointly with vmlinux, and moving such a module onto
// its vmlinux is a relocation (package distill, strict or layout-compatible)
// for the caller to choose, not a reading. ReadBTF returns both sections.
func ModuleBTF(file string, data []byte) ([]byte, error) {
	if format := FormatFromExt(file); format != FormatNone {
		if strings.Contains(file, ".ko") {
			// A module is ELF from its first bytes: anything else is
			// refused before it inflates to the cap (issue 33: eleven
			// 380 MiB modules of zeros in a 1 KB package).
			if !CompressedELF(bytes.NewReader(data), format) {
				return nil, fmt.Errorf("%w: module is not ELF", ErrUnknownFormat)
			}
		}
		inner, release, err := Decompress(data, format, MaxImage)
		if err != nil {
			return nil, err
		}
		defer release()
		data = inner
	}
	if !strings.Contains(file, ".ko") {
		return RawBTFFile(data)
	}
	if !IsELF(data) {
		return nil, fmt.Errorf("%w: module is not ELF", ErrUnknownFormat)
	}
	e, err := ReadELFBTF(data)
	if err != nil {
		return nil, err
	}
	if e.Base != nil {
		return nil, fmt.Errorf("module BTF is split over a distilled base (.BTF.base), which this corpus format does not carry")
	}
	return e.BTF, nil
}

// CompressedELF tells whether a compressed stream opens with the ELF
// magic, from its first decompressed bytes, without inflating the rest.
// A stream that does not decode that far is not ELF either.
func CompressedELF(r io.Reader, format string) bool {
	dr, err := NewDecompressReader(r, format)
	if err != nil {
		return false
	}
	defer dr.Close()
	var head [len(elf.ELFMAG)]byte
	_, err = io.ReadFull(dr, head[:])
	return err == nil && IsELF(head[:])
}

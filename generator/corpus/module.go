package corpus

import (
	"fmt"
	"strings"
)

// moduleSuffixes are the file names a module's BTF is read from: the module
// itself as the kernel ships it, or its raw split BTF.
var moduleSuffixes = []string{
	".ko", ".ko.xz", ".ko.zst", ".ko.gz",
	".btf", ".btf.xz", ".btf.zst", ".btf.gz",
}

// moduleName returns the module name of a file name ("nf_conntrack" for
// nf_conntrack.ko.xz) and whether the name is one of a module.
func moduleName(file string) (string, bool) {
	for _, s := range moduleSuffixes {
		if name, ok := strings.CutSuffix(file, s); ok && name != "" {
			return name, true
		}
	}
	return "", false
}

// moduleBTF returns the raw split BTF of a module file, whose name says its
// format. The BTF is checked for framing only: validating it needs the base.
//
// A module whose .BTF is split over its own distilled base (.BTF.base) is
// refused: Module.BTF is split BTF over the kernel's vmlinux, as the
// generator minimizes it jointly with vmlinux, and moving such a module onto
// its vmlinux is a relocation (package distill, strict or layout-compatible)
// for the caller to choose, not a reading. ReadBTF returns both sections.
func moduleBTF(file string, data []byte) ([]byte, error) {
	if format := formatFromExt(file); format != formatNone {
		inner, release, err := decompress(data, format, maxImage)
		if err != nil {
			return nil, err
		}
		defer release()
		data = inner
	}
	if !strings.Contains(file, ".ko") {
		return rawBTFFile(data)
	}
	if !isELF(data) {
		return nil, fmt.Errorf("%w: module is not ELF", ErrUnknownFormat)
	}
	e, err := readELFBTF(data)
	if err != nil {
		return nil, err
	}
	if e.Base != nil {
		return nil, fmt.Errorf("module BTF is split over a distilled base (.BTF.base), which this corpus format does not carry")
	}
	return e.BTF, nil
}

// checkModule validates a module's split BTF over its kernel's vmlinux.
func checkModule(btf []byte, base *btfSpec) error {
	s, err := parseBTF(btf, base)
	if err == nil {
		err = s.CheckSplitNames()
	}
	if err != nil {
		return fmt.Errorf("split BTF over the kernel's vmlinux: %w", err)
	}
	return nil
}

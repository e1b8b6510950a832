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
func moduleBTF(file string, data []byte) ([]byte, error) {
	if format := formatFromExt(file); format != formatNone {
		var err error
		if data, err = decompress(data, format, 0); err != nil {
			return nil, err
		}
	}
	if !strings.Contains(file, ".ko") {
		blob, err := btfBlob(data)
		if err != nil {
			return nil, err
		}
		if len(blob) != len(data) {
			return nil, fmt.Errorf("not raw BTF: %d bytes after the BTF blob", len(data)-len(blob))
		}
		return blob, nil
	}
	if !isELF(data) {
		return nil, fmt.Errorf("%w: module is not ELF", ErrUnknownFormat)
	}
	sec, _, err := elfSection(data, ".BTF")
	if err != nil {
		return nil, err
	}
	if sec == nil {
		return nil, fmt.Errorf("%w: module has no .BTF section", ErrNoBTF)
	}
	if hasELFSection(data, ".BTF.base") {
		return nil, fmt.Errorf("module BTF is split over a distilled base (.BTF.base), which this corpus format does not carry")
	}
	blob, err := btfBlob(sec)
	if err != nil {
		return nil, fmt.Errorf(".BTF section: %w", err)
	}
	return blob, nil
}

// checkModule validates a module's split BTF over its kernel's vmlinux.
func checkModule(btf []byte, base *btfSpec) error {
	if _, err := parseBTF(btf, base); err != nil {
		return fmt.Errorf("split BTF over the kernel's vmlinux: %w", err)
	}
	return nil
}

package extract

import "errors"

// Sentinel errors, wrapped by the errors of this package (and re-exported
// by package corpus).
var (
	// ErrNoBTF: the input holds no BTF (for a kernel image, it was built
	// without CONFIG_DEBUG_INFO_BTF).
	ErrNoBTF = errors.New("no BTF found")
	// ErrUnknownFormat: the input is none of the formats this package reads.
	ErrUnknownFormat = errors.New("unknown file format")
	// ErrArchMismatch: a package says one architecture (a .deb's control
	// file, an RPM's ARCH tag) and holds a kernel ELF file of another.
	// Neither is taken over the other: such a package is refused.
	ErrArchMismatch = errors.New("package architecture differs from its ELF machine")
)

package kernelkey

import (
	"cmp"
	"strings"

	"github.com/btfembed/btfembed/internal/safetext"
)

// Key identifies one kernel build: what the generator embeds BTF for, what
// a corpus holds, and what the runtime looks up for the running kernel.
type Key struct {
	// Arch is the kernel's architecture as BTFHub names it ("x86_64",
	// "arm64", ...); see NormalizeArch.
	Arch string
	// Release is the kernel release, as uname -r prints it.
	Release string
	// Distro and Version are ID and VERSION_ID from the distribution's
	// os-release file ("debian", "12"). Either may be empty when nothing
	// tells them.
	Distro, Version string
}

// String formats the key as arch/release plus the distribution if known:
// "x86_64/6.1.0-47-amd64 (debian 12)". It is the one spelling of a kernel
// in tables, listings and errors. Control characters, which a key read
// from a payload or a part may hold, are escaped (safetext.Escape), so
// printing a key never forges a line or drives the terminal.
func (k Key) String() string {
	s := k.Arch + "/" + k.Release
	if k.Distro != "" || k.Version != "" {
		s += " (" + strings.TrimSpace(k.Distro+" "+k.Version) + ")"
	}
	return safetext.Escape(s)
}

// Compare orders keys by arch, release, distro and version: the order of
// a payload's entries, so all builds of one release are neighbours.
func (k Key) Compare(o Key) int {
	return cmp.Or(
		strings.Compare(k.Arch, o.Arch),
		strings.Compare(k.Release, o.Release),
		strings.Compare(k.Distro, o.Distro),
		strings.Compare(k.Version, o.Version),
	)
}

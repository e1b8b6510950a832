package corpus

import (
	"path"
	"strings"
)

// Key identifies one kernel build in a corpus.
//
// Arch is normalized (see [btfruntime.NormalizeArch]). Distro and Version are the
// distribution's ID and VERSION_ID as in /etc/os-release ("debian", "12");
// they are empty when neither the layout nor the input tells them.
type Key struct {
	Arch, Release, Distro, Version string
}

// String formats the key as the corpus path it lives under,
// <distro>/<version>/<arch>/<release>, with "unknown" for empty parts.
func (k Key) String() string {
	return path.Join(orUnknown(k.Distro), orUnknown(k.Version), orUnknown(k.Arch), orUnknown(k.Release))
}

// Compare orders keys by distro, version, arch and release.
func (k Key) Compare(o Key) int {
	for _, p := range [][2]string{{k.Distro, o.Distro}, {k.Version, o.Version}, {k.Arch, o.Arch}, {k.Release, o.Release}} {
		if c := strings.Compare(p[0], p[1]); c != 0 {
			return c
		}
	}
	return 0
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

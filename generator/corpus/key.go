package corpus

import (
	"path"
	"strings"
)

// Key identifies one kernel build in a corpus.
//
// Arch is normalized (see [NormalizeArch]). Distro and Version are the
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

// archAliases maps every spelling we meet (uname -m, Debian and RPM
// architecture names, Go's GOARCH, BTFHub directory names) to the name
// BTFHub uses, which is also uname -m where the two agree.
var archAliases = map[string]string{
	"x86_64": "x86_64", "amd64": "x86_64", "x86-64": "x86_64", "x64": "x86_64",
	"arm64": "arm64", "aarch64": "arm64",
	"s390x": "s390x", "s390": "s390x",
	"ppc64le": "ppc64le", "ppc64el": "ppc64le", "powerpc64le": "ppc64le",
	"ppc64": "ppc64", "powerpc64": "ppc64",
	"riscv64":     "riscv64",
	"loongarch64": "loongarch64", "loong64": "loongarch64",
	"mips64el": "mips64el", "mips64le": "mips64el",
	"arm": "arm", "armhf": "arm", "armel": "arm", "armv7l": "arm", "armv7": "arm",
	"i386": "i386", "i686": "i386", "386": "i386", "x86": "i386",
}

// NormalizeArch returns the canonical name of an architecture (x86_64, arm64,
// s390x, ppc64le, ppc64, riscv64, loongarch64, mips64el, arm, i386) and
// whether the spelling was recognized.
func NormalizeArch(s string) (string, bool) {
	a, ok := archAliases[strings.ToLower(s)]
	return a, ok
}

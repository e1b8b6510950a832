package kernelkey

import "strings"

// archAliases maps every spelling of an architecture met in the field
// (uname -m, Debian and RPM architecture names, Go's GOARCH, BTFHub
// directory names) to the name BTFHub uses for its directories, which is
// also uname -m where the two agree.
var archAliases = map[string]string{
	"x86_64": "x86_64", "amd64": "x86_64", "x86-64": "x86_64", "x64": "x86_64",
	"arm64": "arm64", "aarch64": "arm64", "armv8": "arm64", "armv8l": "arm64",
	"s390x": "s390x", "s390": "s390x",
	"ppc64le": "ppc64le", "ppc64el": "ppc64le", "powerpc64le": "ppc64le",
	"ppc64": "ppc64", "powerpc64": "ppc64",
	"riscv64":     "riscv64",
	"loongarch64": "loongarch64", "loong64": "loongarch64",
	"mips64el": "mips64el", "mips64le": "mips64el",
	"arm": "arm", "armhf": "arm", "armel": "arm", "armv7l": "arm", "armv7": "arm", "armv6l": "arm",
	"i386": "i386", "i486": "i386", "i586": "i386", "i686": "i386", "386": "i386", "x86": "i386",
}

// NormalizeArch returns the canonical name of an architecture (x86_64,
// arm64, s390x, ppc64le, ppc64, riscv64, loongarch64, mips64el, arm, i386)
// and true, or s unchanged and false for a spelling it does not know. The
// generator keys embedded kernels with it and the runtime keys the running
// kernel with it, so both sides agree.
func NormalizeArch(s string) (string, bool) {
	if a, ok := archAliases[strings.ToLower(s)]; ok {
		return a, true
	}
	return s, false
}

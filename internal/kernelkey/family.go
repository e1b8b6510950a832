package kernelkey

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/btfembed/btfembed/internal/safetext"
)

// Family is the series of kernel builds a distribution release ships for
// one architecture and flavour, that differ only in their ABI number:
// Debian's and Ubuntu's releases are <series>-<ABI><flavour>
// ("6.1.0-47-amd64": series 6.1.0, ABI 47, flavour -amd64;
// "5.4.0-150-generic"), and each patch release of the series, every few
// weeks, bumps the ABI. A payload built today stops at some ABI; the
// family is what the builds after it have in common with the embedded
// ones, by name.
//
// Releases of other forms (RHEL's 4.18.0-477.10.1.el8_8.x86_64, Debian's
// backports 6.12.118+deb12-amd64) belong to no family: their names do not
// say which builds differ only by patch release.
type Family struct {
	Arch, Distro, Version string
	// Series is the release up to the ABI number ("6.1.0"), Flavour the
	// rest after it, with its dash ("-amd64", "-cloud-amd64").
	Series, Flavour string
}

// FamilyOf returns the family of k and k's ABI number in it; ok is false
// when k's release is not <series>-<ABI><flavour> (series digits and dots,
// ABI digits without a leading zero, flavour a dash, a letter, then
// letters, digits and ._+-) or its distribution or version is unknown.
func FamilyOf(k Key) (f Family, abi uint64, ok bool) {
	if k.Arch == "" || k.Distro == "" || k.Version == "" {
		return Family{}, 0, false
	}
	series, rest, ok := strings.Cut(k.Release, "-")
	if !ok || !dotted(series) {
		return Family{}, 0, false
	}
	n := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if n <= 0 || rest[0] == '0' && n > 1 {
		return Family{}, 0, false
	}
	abi, err := strconv.ParseUint(rest[:n], 10, 64)
	flavour := rest[n:]
	if err != nil || !validFlavour(flavour) {
		return Family{}, 0, false
	}
	return Family{Arch: k.Arch, Distro: k.Distro, Version: k.Version, Series: series, Flavour: flavour}, abi, true
}

// dotted says s is numbers separated by dots: "6.1.0".
func dotted(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return strings.Contains(s, ".")
}

func validFlavour(s string) bool {
	if len(s) < 2 || s[0] != '-' || !isLetter(s[1]) {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && (c < '0' || c > '9') && !strings.ContainsRune("._+-", rune(c)) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// Valid reports whether f is a family FamilyOf can return: the one check
// of a family read from a payload.
func (f Family) Valid() bool {
	g, _, ok := FamilyOf(f.Key(1))
	return ok && g == f
}

// Key is the key of the family's build with ABI number abi.
func (f Family) Key(abi uint64) Key {
	return Key{Arch: f.Arch, Release: f.Series + "-" + strconv.FormatUint(abi, 10) + f.Flavour, Distro: f.Distro, Version: f.Version}
}

// String spells the family with its releases as a pattern:
// "debian 12 x86_64 6.1.0-*-amd64", escaped as Key.String is.
func (f Family) String() string {
	return safetext.Escape(f.Distro + " " + f.Version + " " + f.Arch + " " + f.Series + "-*" + f.Flavour)
}

// Compare orders families by arch, distro, version, series and flavour.
func (f Family) Compare(o Family) int {
	return cmp.Or(
		strings.Compare(f.Arch, o.Arch),
		strings.Compare(f.Distro, o.Distro),
		strings.Compare(f.Version, o.Version),
		strings.Compare(f.Series, o.Series),
		strings.Compare(f.Flavour, o.Flavour),
	)
}

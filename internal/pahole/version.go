package pahole

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is a pahole release, as "pahole --version" prints it ("v1.24").
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("v%d.%d", v.Major, v.Minor) }

// less tells whether v is older than w.
func (v Version) less(w Version) bool {
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

// atLeast tells whether v is w or newer.
func (v Version) atLeast(major, minor int) bool { return !v.less(Version{major, minor}) }

// MinVersion is the oldest pahole Find accepts (see the package doc).
var MinVersion = Version{1, 22}

// ParseVersion reads the output of "pahole --version".
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	maj, min, ok := strings.Cut(t, ".")
	if !ok {
		return Version{}, fmt.Errorf("pahole version %q: want v<major>.<minor>", s)
	}
	// Development builds print more after the minor ("1.24-1").
	if i := strings.IndexFunc(min, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		min = min[:i]
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if err := errors.Join(err1, err2); err != nil || a < 0 || b < 0 {
		return Version{}, fmt.Errorf("pahole version %q: want v<major>.<minor>", s)
	}
	return Version{a, b}, nil
}

// KernelVersion is a kernel's major and minor version, as its release
// starts ("6.1.0-50-cloud-amd64" is 6.1). The zero value is a kernel of
// unknown version, taken as the newest.
type KernelVersion struct{ Major, Minor int }

// ParseKernelRelease reads the version a release string starts with, or
// returns the zero KernelVersion.
func ParseKernelRelease(release string) KernelVersion {
	maj, rest, ok := strings.Cut(release, ".")
	if !ok {
		return KernelVersion{}
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(rest[:end])
	if err1 != nil || err2 != nil || a <= 0 || b < 0 {
		return KernelVersion{}
	}
	return KernelVersion{a, b}
}

// before tells whether the kernel is known to be older than major.minor.
func (k KernelVersion) before(major, minor int) bool {
	if k == (KernelVersion{}) {
		return false
	}
	return k.Major < major || k.Major == major && k.Minor < minor
}

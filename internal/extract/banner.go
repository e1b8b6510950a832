package extract

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// BannerInfo is what a kernel's banner (linux_banner, "Linux version
// 6.1.0-47-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian
// 12.2.0-14+deb12u1) 12.2.0, ...) #1 SMP PREEMPT_DYNAMIC Debian 6.1.170-3")
// tells about the build.
type BannerInfo struct {
	Release, Distro, Version string
}

var bannerPrefix = []byte("Linux version ")

// distroPatterns guess the distribution and its version from the banner:
// the compiler and kernel package versions carry the distribution's marks
// (+deb12u1, ~22.04). The first pattern that matches wins; a banner none
// matches is read for an RPM dist tag (.el9, .fc39, see DistTag). They
// are compiled on first use, not at every start of the command.
var distroPatterns = sync.OnceValue(func() []distroPattern {
	return []distroPattern{
		{"debian", regexp.MustCompile(`[+~]deb(\d+)`)},
		{"ubuntu", regexp.MustCompile(`ubuntu\d*~(\d+\.\d+)`)},
		{"ubuntu", regexp.MustCompile(`-Ubuntu\b()`)},
		{"debian", regexp.MustCompile(`\bDebian\b()`)},
	}
})

type distroPattern struct {
	distro string
	re     *regexp.Regexp // the first group, when present, is the version
}

// FindBanner finds the kernel banner in a decompressed kernel and reads the
// release and a guess of the distribution from it. The first "Linux version "
// followed by a digit is the banner; format strings ("Linux version %s")
// are passed over.
func FindBanner(data []byte) (BannerInfo, bool) {
	for off := 0; ; {
		i := bytes.Index(data[off:], bannerPrefix)
		if i < 0 {
			return BannerInfo{}, false
		}
		off += i + len(bannerPrefix)
		if off < len(data) && data[off] >= '0' && data[off] <= '9' {
			line := data[off:]
			if j := bytes.IndexAny(line, "\x00\n"); j >= 0 {
				line = line[:j]
			}
			return ParseBanner(string(line)), true
		}
	}
}

// ParseBanner reads the banner text after "Linux version ".
func ParseBanner(line string) BannerInfo {
	var b BannerInfo
	b.Release, _, _ = strings.Cut(line, " ")
	for _, p := range distroPatterns() {
		if m := p.re.FindStringSubmatch(line); m != nil {
			b.Distro = p.distro
			if len(m) > 1 {
				b.Version = m[1]
			}
			return b
		}
	}
	b.Distro, b.Version, _ = DistTag(line)
	return b
}

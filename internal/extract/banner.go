package extract

import (
	"bytes"
	"fmt"
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
	// From is the text of the banner that told Distro and Version, and
	// what it means where that is not plain ("+deb12", "Debian
	// 5.10.223-1: Debian 11 ships 5.10"), so that a guess can be shown
	// with its reason; "" when the banner tells no distribution.
	From string
}

var bannerPrefix = []byte("Linux version ")

// distroPatterns guess the distribution and its version from the banner:
// the compiler and kernel package versions carry the distribution's marks
// (+deb12u1, ~bpo11+1, ~22.04). The first pattern that matches wins; a
// Debian banner without a mark is read by debianVersion, and a banner none
// matches is read for an RPM dist tag (.el9, .fc39, see DistTag). They are
// compiled on first use, not at every start of the command.
var distroPatterns = sync.OnceValue(func() []distroPattern {
	return []distroPattern{
		{"debian", regexp.MustCompile(`[+~]deb(\d+)`)},
		{"debian", regexp.MustCompile(`~bpo(\d+)`)}, // backports: 6.1.76-1~bpo11+1
		{"ubuntu", regexp.MustCompile(`ubuntu\d*~(\d+\.\d+)`)},
		{"ubuntu", regexp.MustCompile(`-Ubuntu\b()`)},
		{"debian", regexp.MustCompile(`\bDebian\b()`)},
	}
})

type distroPattern struct {
	distro string
	re     *regexp.Regexp // the first group, when present, is the version
}

// debianReleases name the Debian release of a kernel built by Debian
// whose banner carries no +debN or ~bpoN mark, as the kernels of a
// release's own point releases do ("#1 SMP Debian 5.10.223-1"): each
// release ships one kernel series, and builds with one default gcc. The
// package version comes first, as the compiler is the build machine's,
// which for a backport is the older release's; both come from Debian's
// release notes (bullseye: 5.10 and gcc 10; bookworm: 6.1 and gcc 12;
// trixie: 6.12 and gcc 14). A series or compiler not listed (sid's) tells
// no version.
var debianReleases = struct{ series, gcc map[string]string }{
	series: map[string]string{"4.9": "9", "4.19": "10", "5.10": "11", "6.1": "12", "6.12": "13"},
	gcc:    map[string]string{"6": "9", "8": "10", "10": "11", "12": "12", "14": "13"},
}

// debianVersionPatterns find the kernel package version in the banner's
// build line ("#1 SMP Debian 5.10.223-1 (2024-08-10)", or "# SMP ..." as
// Debian's reproducible builds leave the number out) and the version of
// Debian's gcc before it ("gcc-10 (Debian 10.2.1-6) 10.2.1", "gcc version
// 8.3.0 (Debian 8.3.0-6)").
var debianVersionPatterns = sync.OnceValue(func() [2]*regexp.Regexp {
	return [2]*regexp.Regexp{
		regexp.MustCompile(`#\d* .*\bDebian ((\d+\.\d+)\.\d+-\S+)`),
		regexp.MustCompile(`\(Debian ((\d+)\.\d+\.\d+-[^)\s]+)\)`),
	}
})

// debianVersion tells the Debian release of a Debian banner without a
// release mark, from its kernel package version or else its compiler
// (debianReleases), with the text that told it.
func debianVersion(line string) (version, from string) {
	p := debianVersionPatterns()
	if m := p[0].FindStringSubmatch(line); m != nil {
		if v, ok := debianReleases.series[m[2]]; ok {
			return v, fmt.Sprintf("Debian %s: Debian %s ships %s", m[1], v, m[2])
		}
	}
	if m := p[1].FindStringSubmatch(line); m != nil {
		if v, ok := debianReleases.gcc[m[2]]; ok {
			return v, fmt.Sprintf("gcc Debian %s: Debian %s's gcc %s", m[1], v, m[2])
		}
	}
	return "", ""
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
		m := p.re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		b.Distro, b.Version, b.From = p.distro, m[1], m[0]
		if b.Distro == "debian" && b.Version == "" {
			if v, from := debianVersion(line); v != "" {
				b.Version, b.From = v, from
			}
		}
		return b
	}
	b.Distro, b.Version, b.From = DistTag(line)
	return b
}

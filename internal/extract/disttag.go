package extract

import (
	"regexp"
	"strings"
	"sync"
)

// distTags map the dist tag that RPM-based distributions put in package
// releases and kernel releases ("427.13.1.el9_4", "6.8.5-301.fc40",
// "5.10.215-203.850.amzn2") to the distribution and version names of the
// BTFHub archive's layout (<distro>/<version>/<arch>/). The tag is the
// prefix, then the version digits, then an optional suffix.
var distTags = []struct {
	prefix, suffix, distro string
}{
	{"el", "uek", "ol"}, // Oracle's Unbreakable Enterprise Kernel: el8uek
	{"el", "", "centos"},
	{"fc", "", "fedora"},
	{"amzn", "", "amzn"}, // amzn1, amzn2, amzn2023: BTFHub's amzn/1, amzn/2
	{"ol", "", "ol"},
}

// distTagRE finds a dist tag in a release: a dot, a known prefix, digits,
// then letters, digits or underscores ("el9_4", "el8uek", "fc40").
var distTagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.((?:el|fc|amzn|ol)\d+[a-z0-9_]*)`) })

// DistTag reads the distribution and its major version from the first
// dist tag in a package or kernel release (or a banner, which starts with
// the kernel release), and returns the tag that told them (".el9_4"), or
// three empty strings. Enterprise Linux ("el") is taken as centos, the
// name BTFHub's freely downloadable RHEL rebuilds are kept under;
// RPMDistro refines it with the package's vendor.
func DistTag(release string) (distro, version, tag string) {
	m := distTagRE().FindStringSubmatch(release)
	if m == nil {
		return "", "", ""
	}
	for _, d := range distTags {
		rest, ok := strings.CutPrefix(m[1], d.prefix)
		if !ok {
			continue
		}
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 || (d.suffix != "" && !strings.HasPrefix(rest[n:], d.suffix)) {
			continue
		}
		return d.distro, rest[:n], m[0]
	}
	return "", "", ""
}

// rpmVendors name the distribution of an Enterprise Linux package by its
// Vendor tag, where it tells more than the dist tag: RHEL and Oracle Linux
// build their kernels with the same el<N> tag as CentOS.
var rpmVendors = []struct{ prefix, distro string }{
	{"Red Hat", "rhel"},
	{"Oracle", "ol"},
}

// RPMDistro is the distribution and version of a kernel package: the dist
// tag of its release (else of the kernel release found in it), with an
// Enterprise Linux tag named by the vendor for Red Hat (rhel) and Oracle
// (ol). from says what told them (".el9_4, vendor Red Hat, Inc."), or is
// "" with them. Import's flags override it.
func RPMDistro(h RPMHeader, kernelRelease string) (distro, version, from string) {
	distro, version, from = DistTag(h.Release)
	if from == "" {
		if distro, version, from = DistTag(kernelRelease); from == "" {
			return "", "", ""
		}
	}
	if distro == "centos" {
		for _, v := range rpmVendors {
			if strings.HasPrefix(h.Vendor, v.prefix) {
				distro = v.distro
				from += ", vendor " + h.Vendor
			}
		}
	}
	return distro, version, from
}

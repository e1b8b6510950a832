// Package kernelarch is btfembed's one list of kernel architectures: their
// canonical names (BTFHub's directory names), the other spellings met in
// the field (uname -m, Debian and RPM names, Go's GOARCH) and the byte
// order their kernels run in. kernelkey.NormalizeArch, the spelling both
// the generator and the runtime key kernels with, is Normalize.
package kernelarch

import (
	"encoding/binary"
	"slices"
	"sync"
)

// arches lists the architectures btfembed knows kernels of: each by its
// canonical name, the one BTFHub uses for its directories (also uname -m
// where the two agree), with the byte order its kernels run in and the
// other spellings met in the field (uname -m, Debian and RPM architecture
// names, Go's GOARCH). It is the one list of them: the generator pairs BPF
// objects with kernels by it, and the runtime keys the running kernel by it.
var arches = []struct {
	name    string
	order   binary.ByteOrder
	aliases []string
}{
	{"arm", binary.LittleEndian, []string{"armhf", "armel", "armv7l", "armv7", "armv6l"}},
	{"arm64", binary.LittleEndian, []string{"aarch64", "armv8", "armv8l"}},
	{"i386", binary.LittleEndian, []string{"i486", "i586", "i686", "386", "x86"}},
	{"loongarch64", binary.LittleEndian, []string{"loong64"}},
	{"mips64el", binary.LittleEndian, []string{"mips64le"}},
	{"ppc64", binary.BigEndian, []string{"powerpc64"}},
	{"ppc64le", binary.LittleEndian, []string{"ppc64el", "powerpc64le"}},
	{"riscv64", binary.LittleEndian, nil},
	{"s390x", binary.BigEndian, []string{"s390"}},
	{"x86_64", binary.LittleEndian, []string{"amd64", "x86-64", "x64"}},
}

// archIndex maps every spelling in arches, the canonical names included,
// to its entry. It is built on first use, not at init: every program
// that links the package (the agent, each btfembed command) pays its
// start, and few look an architecture up.
var archIndex = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for i, a := range arches {
		m[a.name] = i
		for _, alias := range a.aliases {
			m[alias] = i
		}
	}
	return m
})

// lookup finds arch, in any case, in archIndex. Spellings are ASCII, so
// case is ASCII case: strings.ToLower would link Unicode's case tables
// into every agent (9.6 KB, docs/performance.md).
func lookup(arch string) (int, bool) {
	b := []byte(arch)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	i, ok := archIndex()[string(b)]
	return i, ok
}

// Normalize returns the canonical name of an architecture (one of
// Arches) and true, or s unchanged and false for a spelling it does not
// know. The generator keys embedded kernels with it and the runtime keys
// the running kernel with it, so both sides agree.
func Normalize(s string) (string, bool) {
	if i, ok := lookup(s); ok {
		return arches[i].name, true
	}
	return s, false
}

// Arches returns the canonical names of the architectures Normalize
// knows, sorted: x86_64, arm64, s390x, ppc64le, ppc64, riscv64,
// loongarch64, mips64el, arm and i386. The generator pairs generic BPF
// objects with the kernels of all of them.
func Arches() []string {
	names := make([]string, len(arches))
	for i, a := range arches {
		names[i] = a.name
	}
	slices.Sort(names)
	return names
}

// ByteOrder returns the byte order that kernels of arch, in any spelling
// Normalize knows, run in, and true; nil and false for an unknown
// architecture. A BPF object runs only on kernels of its own byte order.
func ByteOrder(arch string) (binary.ByteOrder, bool) {
	if i, ok := lookup(arch); ok {
		return arches[i].order, true
	}
	return nil, false
}

// OfGOARCH is the kernel architecture (Normalize spelling) that a Go
// program built for goarch runs on, or "" when btfembed knows none (mips,
// mipsle and mips64 have no kernels in BTF corpora). go:generate mode
// writes one payload per GOARCH from the kernels of this architecture.
func OfGOARCH(goarch string) string {
	if a, ok := Normalize(goarch); ok {
		return a
	}
	return ""
}

// LinuxGOARCHes are the GOARCHes Go builds Linux programs for, as
// `go tool dist list` gives them: the builds a package's BPF objects may be
// embedded in.
var LinuxGOARCHes = []string{"386", "amd64", "arm", "arm64", "loong64", "mips", "mips64", "mips64le", "mipsle", "ppc64", "ppc64le", "riscv64", "s390x"}

// IsLinuxGOARCH reports whether goarch is a GOARCH Go builds Linux
// programs for.
func IsLinuxGOARCH(goarch string) bool { return slices.Contains(LinuxGOARCHes, goarch) }

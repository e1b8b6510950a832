package runtime

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/safetext"
)

// The advice of a NotSupportedError is often read first in the field, on
// the machine whose kernel is missing, far from the agent's corpus, so it
// names the exact command for this kernel, and only a route that works
// there. A kernel without BTF of its own has none in its image either
// (/boot/vmlinuz-<release> is the same build), so its BTF has to be made
// from its DWARF, which distributions ship in a debug package; btfembed
// corpus import runs pahole on that. A kernel with BTF of its own (the
// embedded BTF forced) serves its /sys/kernel/btf/vmlinux.

// hostBTF is what Select saw of the running kernel's own BTF.
type hostBTF int

const (
	// hostBTFUnknown: Lookup, whose key need not be the running kernel's.
	hostBTFUnknown hostBTF = iota
	// hostBTFNone: no /sys/kernel/btf/vmlinux, or one that cannot be used.
	hostBTFNone
	// hostBTFOwn: a /sys/kernel/btf/vmlinux that ForceEmbedded skipped.
	hostBTFOwn
)

// adviseOn records, in the NotSupportedError err holds if any, what the
// kernel Select looked at has of its own BTF. Without ForceEmbedded,
// Select reaches the payload only where that BTF is missing or unusable.
func adviseOn(err error, opts *SelectOptions) {
	var nse *NotSupportedError
	if !errors.As(err, &nse) {
		return
	}
	nse.host = hostBTFNone
	if opts.ForceEmbedded {
		if present, err := kernelFile(filepath.Join(rootDir(opts.HostRoot), "sys/kernel/btf/vmlinux")); present && err == nil {
			nse.host = hostBTFOwn
		}
	}
}

// debugPackages names the package that holds a release's DWARF vmlinux,
// by distribution (os-release ID), as fmt formats of the release: the
// package and the file a download gives.
var debugPackages = []struct {
	ids        []string
	label      string
	name, file string
}{
	{[]string{"debian"}, "Debian", "linux-image-%s-dbg", "linux-image-%s-dbg_*.deb"},
	{[]string{"ubuntu", "linuxmint"}, "Ubuntu", "linux-image-unsigned-%s-dbgsym", "linux-image-unsigned-%s-dbgsym_*.ddeb"},
	{[]string{"rhel", "centos", "rocky", "almalinux", "fedora", "amzn"}, "RHEL, Fedora and Amazon Linux", "kernel-debuginfo-%s", "kernel-debuginfo-%s.rpm"},
}

// fix tells the developer how to embed the missing kernel, from what
// Select saw of its own BTF.
func (e *NotSupportedError) fix() string {
	k := Key{Arch: safetext.Escape(e.Key.Arch), Release: safetext.Escape(e.Key.Release),
		Distro: safetext.Escape(e.Key.Distro), Version: safetext.Escape(e.Key.Version)}
	const into = "to embed it, import its BTF into the agent's corpus (CORPUS below, the -corpus of its go:generate line) and run go generate again: "
	const debugInfo = "pahole makes it from the kernel's debug info: "
	switch e.host {
	case hostBTFOwn:
		return into + "this kernel has BTF of its own: " + ownBTF(k)
	case hostBTFNone:
		return into + "this kernel has no BTF of its own (no usable /sys/kernel/btf/vmlinux, and none in its image), so " + debugInfo + debugPackage(k)
	}
	return into + "where the kernel has BTF of its own, " + ownBTF(k) + "; where it has none, " + debugInfo + debugPackage(k)
}

// ownBTF is the route for a kernel with /sys/kernel/btf/vmlinux: the file
// copied off it does not say which kernel it is, so the flags do.
func ownBTF(k Key) string {
	flags := "-arch " + k.Arch + " -release " + k.Release
	if k.Distro != "" {
		flags += " -distro " + k.Distro
	}
	if k.Version != "" {
		flags += " -version " + k.Version
	}
	return "copy /sys/kernel/btf/vmlinux off it and run `go tool btfembed corpus import -o CORPUS " + flags + " vmlinux` in the agent's module"
}

// debugPackage is the route for a kernel without BTF: its distribution's
// debug package, or every one known where the distribution is not.
func debugPackage(k Key) string {
	for _, p := range debugPackages {
		if slices.ContainsFunc(p.ids, func(id string) bool { return sameID(id, k.Distro) }) {
			return fmt.Sprintf("download its debug package, "+p.name+", and run `go tool btfembed corpus import -o CORPUS "+p.file+"` in the agent's module",
				k.Release, k.Release)
		}
	}
	var names []string
	for _, p := range debugPackages {
		names = append(names, p.label+": "+fmt.Sprintf(p.name, k.Release))
	}
	return "download its debug package (" + strings.Join(names, "; ") + "), or take the vmlinux its build left (CONFIG_DEBUG_INFO), " +
		"and run `go tool btfembed corpus import -o CORPUS <package or vmlinux>` in the agent's module"
}

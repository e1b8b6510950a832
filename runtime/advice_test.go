package runtime

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotSupportedAdvice: the error for a kernel the payload lacks says
// how to add it from what that kernel has. Without BTF of its own, neither
// /sys/kernel/btf/vmlinux nor its image (/boot/vmlinuz-…) has any, so it
// names the distribution's debug package; with BTF of its own (the
// embedded BTF forced), it names /sys/kernel/btf/vmlinux. Lookup, whose
// key need not be the running kernel's, names both routes.
func TestNotSupportedAdvice(t *testing.T) {
	a, byRelease := selectPayload(t)
	kernelBTF := byRelease["6.12.118+deb12-amd64"].VMLinux
	const debian = "kernel not supported: x86_64/5.10.0-30-amd64 (debian 11): none of the 8 embedded kernels matches; " +
		"to embed it, import its BTF into the agent's corpus (CORPUS below, the -corpus of its go:generate line) and run go generate again: " +
		"this kernel has no BTF of its own (no usable /sys/kernel/btf/vmlinux, and none in its image), so pahole makes it from the kernel's debug info: " +
		"download its debug package, linux-image-5.10.0-30-amd64-dbg, and run `go tool btfembed corpus import -o CORPUS linux-image-5.10.0-30-amd64-dbg_*.deb` in the agent's module"
	for _, c := range []struct {
		name    string
		vmlinux []byte // the kernel's /sys/kernel/btf/vmlinux; nil: none
		force   bool
		key     Key
		lookup  bool
		want    []string
		not     []string
	}{
		{name: "no BTF, debian", key: Key{Arch: "x86_64", Release: "5.10.0-30-amd64", Distro: "debian", Version: "11"},
			want: []string{debian}},
		{name: "no BTF, ubuntu", key: Key{Arch: "x86_64", Release: "5.4.0-42-generic", Distro: "ubuntu", Version: "20.04"},
			want: []string{"linux-image-unsigned-5.4.0-42-generic-dbgsym,", "`go tool btfembed corpus import -o CORPUS linux-image-unsigned-5.4.0-42-generic-dbgsym_*.ddeb`"},
			not:  []string{"-dbg,", "kernel-debuginfo"}},
		{name: "no BTF, rocky", key: Key{Arch: "x86_64", Release: "4.18.0-513.el8.x86_64", Distro: "rocky", Version: "8.9"},
			want: []string{"kernel-debuginfo-4.18.0-513.el8.x86_64,", "`go tool btfembed corpus import -o CORPUS kernel-debuginfo-4.18.0-513.el8.x86_64.rpm`"},
			not:  []string{"dbgsym", "linux-image"}},
		{name: "no BTF, other distribution", key: Key{Arch: "arm64", Release: "6.6.3-custom", Distro: "gentoo"},
			want: []string{"(Debian: linux-image-6.6.3-custom-dbg; Ubuntu: linux-image-unsigned-6.6.3-custom-dbgsym; RHEL, Fedora and Amazon Linux: kernel-debuginfo-6.6.3-custom)",
				"the vmlinux its build left (CONFIG_DEBUG_INFO)", "`go tool btfembed corpus import -o CORPUS <package or vmlinux>`"}},
		{name: "corrupt BTF", vmlinux: []byte("\x9f\xeb\x01\x00garbage"), key: Key{Arch: "x86_64", Release: "5.10.0-30-amd64", Distro: "debian", Version: "11"},
			want: []string{"kernel BTF: ", debian}},
		{name: "own BTF, forced embedded", vmlinux: kernelBTF, force: true, key: Key{Arch: "x86_64", Release: "6.6.0-1-amd64", Distro: "debian", Version: "12"},
			want: []string{"this kernel has BTF of its own: copy /sys/kernel/btf/vmlinux off it and run " +
				"`go tool btfembed corpus import -o CORPUS -arch x86_64 -release 6.6.0-1-amd64 -distro debian -version 12 vmlinux` in the agent's module"},
			not: []string{"dbg", "debuginfo", "pahole"}},
		{name: "own BTF, no distribution", vmlinux: kernelBTF, force: true, key: Key{Arch: "x86_64", Release: "6.6.0-1-amd64"},
			want: []string{"`go tool btfembed corpus import -o CORPUS -arch x86_64 -release 6.6.0-1-amd64 vmlinux`"}},
		{name: "Lookup", lookup: true, key: Key{Arch: "x86_64", Release: "5.10.0-30-amd64", Distro: "debian", Version: "11"},
			want: []string{"where the kernel has BTF of its own, copy /sys/kernel/btf/vmlinux off it and run `go tool btfembed corpus import -o CORPUS -arch x86_64 -release 5.10.0-30-amd64 -distro debian -version 11 vmlinux` in the agent's module; where it has none, ",
				"download its debug package, linux-image-5.10.0-30-amd64-dbg, and run `go tool btfembed corpus import -o CORPUS linux-image-5.10.0-30-amd64-dbg_*.deb`"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if c.vmlinux != nil {
				writeFile(t, filepath.Join(root, "sys/kernel/btf/vmlinux"), c.vmlinux)
			}
			var err error
			if c.lookup {
				_, err = a.Lookup(c.key)
			} else {
				k := c.key // no os-release under root: Distro and Version as given
				_, err = a.Select(&SelectOptions{HostRoot: root, ForceEmbedded: c.force, Arch: k.Arch, Release: k.Release, Distro: k.Distro, Version: k.Version})
			}
			if !errors.Is(err, ErrKernelNotSupported) {
				t.Fatalf("error %v, want ErrKernelNotSupported", err)
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n\t%s\ndoes not say\n\t%s", msg, w)
				}
			}
			for _, n := range append(c.not, "/boot/vmlinuz", "`btfembed corpus") {
				if strings.Contains(msg, n) {
					t.Errorf("error\n\t%s\nsays %q", msg, n)
				}
			}
		})
	}
}

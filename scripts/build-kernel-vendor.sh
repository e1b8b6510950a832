#!/usr/bin/env bash
# Builds a Linux 6.1 kernel without BTF whose release is a vendor's,
# 4.18.0-305.el8.x86_64 (CentOS 8.4's), from Debian 12's own kernel source
# (linux-source-6.1), for the VM field test: vendors backport BPF under
# old release numbers, so the release understates what the verifier
# does, and btfembed's predictions must come from the kernel's types.
# The release is set in the Makefile (VERSION, PATCHLEVEL, SUBLEVEL,
# EXTRAVERSION), as a vendor's tree has it. The config is
# testdata/vendorkernel/config.in, that of the shared corpus's nobtf
# kernel (tinyconfig plus serial console, initramfs, tmpfs, tracefs,
# kprobes, tracepoints, BPF syscall and JIT, perf events, cgroups,
# IPv4/6, DWARF 5, no BTF).
#
# Usage: scripts/build-kernel-vendor.sh [DIR]
# DIR (default ~/.cache/btfembed-test/kernel-vendor) receives
#   vmlinuz   the bzImage
#   vmlinux   its ELF vmlinux with DWARF
#   config    its .config
#   release   its `uname -r` (4.18.0-305.el8.x86_64)
# besides the downloaded source package and a lock file. A second run
# with the outputs in place does nothing; runs at once wait for each
# other. Exit status 3: the archive cannot be reached.
#
# Needs apt-get, sha256sum, flock, dpkg-deb, tar, xz, make, gcc, binutils,
# bc, flex, bison, perl and libelf-dev (objtool). 6.3 minutes of make on
# 2 cores (docs/verification.md).
set -euo pipefail

version=6.1.192-3
sha256=5259c57ca92092da39bd2ea803046da0e3c28f2b6a11ea20f6297468188ceb67
release=4.18.0-305.el8.x86_64
top=$(cd "$(dirname "$0")/.." && pwd)

name=build-kernel-vendor
. "$(dirname "$0")/lib/kernel-build.sh"
kb_open "${1:-${HOME}/.cache/btfembed-test/kernel-vendor}"

deb=$dir/linux-source-6.1_${version}_all.deb
download() { (cd "$dir" && apt-get download -q "linux-source-6.1=$version" >/dev/null 2>&1); }
kb_fetch "$deb" "$sha256" "apt-get download linux-source-6.1=$version" download

kb_workdir
echo "build-kernel-vendor: unpacking the source" >&2
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$build" ./usr/src/linux-source-6.1.tar.xz
tar -xJf "$build/usr/src/linux-source-6.1.tar.xz" -C "$build"
rm -rf "$build/usr"
src=$build/linux-source-6.1
cd "$src"

# The vendor's release, where a vendor's tree keeps it.
sed -i -e 's/^VERSION = .*/VERSION = 4/' -e 's/^PATCHLEVEL = .*/PATCHLEVEL = 18/' \
	-e 's/^SUBLEVEL = .*/SUBLEVEL = 0/' -e "s/^EXTRAVERSION =.*/EXTRAVERSION = ${release#4.18.0}/" Makefile

cp "$top/testdata/vendorkernel/config.in" .config
make -s olddefconfig >"$build/config.log" 2>&1 || { cat "$build/config.log" >&2; exit 1; }
for want in CONFIG_BPF_SYSCALL=y CONFIG_BPF_JIT=y CONFIG_DEBUG_INFO_DWARF5=y CONFIG_KPROBE_EVENTS=y CONFIG_LOCALVERSION='""'; do
	grep -qxF "$want" .config || { echo "build-kernel-vendor: $want did not survive olddefconfig" >&2; exit 1; }
done
if grep -q '^CONFIG_DEBUG_INFO_BTF=y' .config; then
	echo "build-kernel-vendor: the config builds BTF" >&2
	exit 1
fi
got=$(make -s kernelrelease)
[[ $got == "$release" ]] || { echo "build-kernel-vendor: kernelrelease is $got, not $release" >&2; exit 1; }

kb_make
kb_install

#!/usr/bin/env bash
# Builds a small Linux 4.15 kernel without BTF, from Ubuntu 18.04's own
# kernel source (linux-source-4.15.0 4.15.0-20.21, the release pocket's,
# which the archive keeps), for the VM field test: 4.15 predates global
# data (.rodata/.data/.bss maps need 5.2), so on it btfembed's global_data
# prediction meets a real verifier. The config is tinyconfig plus what
# the field test's guest needs (serial console, initramfs, proc, sysfs,
# devtmpfs, tmpfs, tracefs, kprobes, tracepoints, perf events, BPF
# syscall and JIT, cgroups, IPv4) and DWARF 4 debug info, from which
# btfembed imports the kernel's BTF with pahole; no BTF in the kernel.
#
# Usage: scripts/build-kernel-4.15.sh [DIR]
# DIR (default ~/.cache/btfembed-test/kernel-4.15) receives
#   vmlinuz   the bzImage
#   vmlinux   its ELF vmlinux with DWARF
#   config    its .config
#   release   its `uname -r` (4.15.17)
# besides the downloaded source package and a lock file. A second run
# with the outputs in place does nothing; runs at once wait for each
# other. Exit status 3: the archive cannot be reached.
#
# Needs curl, sha256sum, flock, dpkg-deb, tar, bzip2, xz, make, gcc,
# binutils, bc and perl (4.15 ships its Kconfig parser: no flex or
# bison). Debian 12's gcc 12 and binutils 2.40 build it as it is, with
# warnings. It builds in a temporary directory under DIR, removed
# afterwards: 9 minutes on 2 cores (docs/verification.md).
set -euo pipefail

version=4.15.0-20.21
url=http://archive.ubuntu.com/ubuntu/pool/main/l/linux/linux-source-4.15.0_${version}_all.deb
sha256=c3596705548e548b6d701f37a45fcb2afaf67dc9f91dcadd5c70853e56a93253

name=build-kernel-4.15
. "$(dirname "$0")/lib/kernel-build.sh"
kb_open "${1:-${HOME}/.cache/btfembed-test/kernel-4.15}"

deb=$dir/linux-source-4.15.0_${version}_all.deb
kb_fetch "$deb" "$sha256" "downloading $url" curl -fsS --retry 2 --max-time 900 -o "$deb" "$url"

kb_workdir
echo "build-kernel-4.15: unpacking the source" >&2
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$build" ./usr/src/linux-source-4.15.0/linux-source-4.15.0.tar.bz2
tar -xjf "$build/usr/src/linux-source-4.15.0/linux-source-4.15.0.tar.bz2" -C "$build"
rm -rf "$build/usr"
src=$build/linux-source-4.15.0
cd "$src"

# What the guest needs on top of tinyconfig. No objtool (stack validation
# and retpolines need it, and 4.15's objtool does not build with gcc 12),
# hence the guess unwinder. 4.15's kprobes and BPF JIT depend on MODULES.
cat >"$build/fragment" <<'EOF'
CONFIG_64BIT=y
CONFIG_LOCALVERSION=""
# CONFIG_LOCALVERSION_AUTO is not set
CONFIG_EXPERT=y
CONFIG_PRINTK=y
CONFIG_BUG=y
CONFIG_MULTIUSER=y
CONFIG_FUTEX=y
CONFIG_EPOLL=y
CONFIG_SIGNALFD=y
CONFIG_TIMERFD=y
CONFIG_EVENTFD=y
CONFIG_SHMEM=y
CONFIG_POSIX_TIMERS=y
CONFIG_KALLSYMS=y
CONFIG_KALLSYMS_ALL=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_RD_GZIP=y
CONFIG_TTY=y
CONFIG_UNIX98_PTYS=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_PROC_FS=y
CONFIG_PROC_SYSCTL=y
CONFIG_SYSFS=y
CONFIG_SYSCTL=y
CONFIG_TMPFS=y
CONFIG_DEVTMPFS=y
CONFIG_PCI=y
CONFIG_ACPI=y
CONFIG_NET=y
CONFIG_UNIX=y
CONFIG_INET=y
CONFIG_CGROUPS=y
CONFIG_CGROUP_BPF=y
CONFIG_BPF=y
CONFIG_BPF_SYSCALL=y
CONFIG_BPF_JIT=y
CONFIG_PERF_EVENTS=y
CONFIG_KPROBES=y
CONFIG_FTRACE=y
CONFIG_KPROBE_EVENTS=y
CONFIG_BPF_EVENTS=y
CONFIG_DEBUG_FS=y
CONFIG_DEBUG_KERNEL=y
CONFIG_DEBUG_INFO=y
CONFIG_DEBUG_INFO_DWARF4=y
# CONFIG_DEBUG_INFO_REDUCED is not set
# CONFIG_DEBUG_INFO_SPLIT is not set
CONFIG_UNWINDER_GUESS=y
# CONFIG_UNWINDER_ORC is not set
# CONFIG_UNWINDER_FRAME_POINTER is not set
# CONFIG_STACK_VALIDATION is not set
# CONFIG_RETPOLINE is not set
# CONFIG_GCC_PLUGINS is not set
CONFIG_MODULES=y
EOF
{
	make -s tinyconfig
	scripts/kconfig/merge_config.sh -m .config "$build/fragment"
	make -s olddefconfig
} >"$build/config.log" 2>&1 || { cat "$build/config.log" >&2; exit 1; }
# merge_config.sh only warns when olddefconfig drops an option.
missing=0
while read -r line; do
	case $line in
	CONFIG_*=*) opt=${line%%=*} ;;
	"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}; line="# $opt is not set" ;;
	*) continue ;;
	esac
	if ! grep -qxF -- "$line" .config && ! { [[ $line == "# "* ]] && ! grep -q "^$opt=" .config; }; then
		echo "build-kernel-4.15: $line did not survive olddefconfig: $(grep "$opt[= ]" .config || echo unset)" >&2
		missing=1
	fi
done <"$build/fragment"
((missing == 0))

kb_make
kb_install

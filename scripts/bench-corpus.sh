#!/bin/sh
# Writes the benchmark corpus and object list that the comparison scripts
# share into DIR: DIR/hub, 12 kernels of raw BTF in the BTFHub layout (the
# 4 testdata/btfhub kernels decompressed, the running kernel's
# /sys/kernel/btf/vmlinux when readable, and copies of those under other
# release names up to 12: with the cache off every kernel is read,
# minimized and verified from scratch), and DIR/objects, one path a line:
# testdata/objects/*-el.o, internal/coremin/testdata/*-el.o, cilium/ebpf's
# btf/testdata relocs*-el.elf and tags-el.elf, its testdata errors-el.elf
# and manyprogs-el.elf, and examples/execsnoop's x86 object (18 on main
# at the time of writing).
#
# Usage: scripts/bench-corpus.sh DIR
set -eu

out=${1:?usage: $0 DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cilium=$(cd "$root" && go list -m -f '{{.Dir}}' github.com/cilium/ebpf)

hub="$out/hub"
for archive in "$root"/testdata/btfhub/*/*/*/*.btf.tar.xz; do
	dir=$(dirname "${archive#"$root"/testdata/btfhub/}")
	mkdir -p "$hub/$dir"
	tar -xJf "$archive" -C "$hub/$dir"
done
if [ -r /sys/kernel/btf/vmlinux ]; then
	mkdir -p "$hub/host/1/$(uname -m)"
	cp /sys/kernel/btf/vmlinux "$hub/host/1/$(uname -m)/$(uname -r).btf"
fi
n=0
while [ "$(find "$hub" -name '*.btf' | wc -l)" -lt 12 ]; do
	for k in $(find "$hub" -name '*.btf' ! -name '*+copy*' | sort); do
		[ "$(find "$hub" -name '*.btf' | wc -l)" -lt 12 ] || break
		n=$((n + 1))
		cp "$k" "${k%.btf}+copy$n.btf"
	done
done

objs="$root/testdata/objects/*-el.o $root/internal/coremin/testdata/*-el.o"
objs="$objs $cilium/btf/testdata/relocs-el.elf $cilium/btf/testdata/relocs_enum-el.elf"
objs="$objs $cilium/btf/testdata/relocs_read-el.elf $cilium/btf/testdata/relocs_read_tgt-el.elf"
objs="$objs $cilium/btf/testdata/tags-el.elf $cilium/testdata/errors-el.elf"
objs="$objs $cilium/testdata/manyprogs-el.elf $root/examples/execsnoop/bpf_x86_bpfel.o"
# shellcheck disable=SC2086
ls $objs >"$out/objects"

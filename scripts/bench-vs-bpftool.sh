#!/bin/sh
# Times "btfembed min" against "bpftool gen min_core_btf" on the same
# inputs: each BTFHub kernel under testdata (decompressed once, as bpftool
# needs raw BTF) with every little-endian test object bpftool accepts for
# that kernel (it gives up on a whole kernel when one relocation is
# ambiguous; btfembed does not). Prints wall time per call, peak RSS and
# the ratio.
#
# Usage: scripts/bench-vs-bpftool.sh [runs]   (default 20 runs per tool)
set -eu

runs=${1:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v bpftool >/dev/null || { echo "bpftool not installed" >&2; exit 1; }
(cd "$root" && go build -o "$tmp/btfembed" ./cmd/btfembed)

# now: seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }

# peak <cmd...>: maximum resident set size in MiB.
peak() {
	/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1 | awk '{ printf "%.1f", $1 / 1024 }'
}

printf '%-24s %4s %12s %12s %10s %10s %7s\n' kernel objs bpftool_s btfembed_s bpftool_MiB btfembed_MiB ratio
for archive in "$root"/testdata/btfhub/*/*/*/*.btf.tar.xz; do
	name=$(basename "$archive" .btf.tar.xz)
	tar -xJf "$archive" -C "$tmp"
	kernel="$tmp/$name.btf"
	objs=""
	for o in "$root"/testdata/objects/*-el.o; do
		if bpftool gen min_core_btf "$kernel" "$tmp/probe.btf" "$o" >/dev/null 2>&1; then
			objs="$objs $o"
		fi
	done
	n=$(echo $objs | wc -w)
	# Alternate the tools run by run so both see the same machine load.
	tb=0
	te=0
	i=0
	while [ "$i" -lt "$runs" ]; do
		t0=$(now)
		# shellcheck disable=SC2086
		bpftool gen min_core_btf "$kernel" "$tmp/bpftool.btf" $objs >/dev/null 2>&1
		t1=$(now)
		# shellcheck disable=SC2086
		"$tmp/btfembed" min "$kernel" "$tmp/btfembed.btf" $objs >/dev/null 2>&1
		t2=$(now)
		tb=$(echo "$tb $t0 $t1" | awk '{ printf "%.6f", $1 + $3 - $2 }')
		te=$(echo "$te $t1 $t2" | awk '{ printf "%.6f", $1 + $3 - $2 }')
		i=$((i + 1))
	done
	tb=$(echo "$tb $runs" | awk '{ printf "%.4f", $1 / $2 }')
	te=$(echo "$te $runs" | awk '{ printf "%.4f", $1 / $2 }')
	# shellcheck disable=SC2086
	mb=$(peak bpftool gen min_core_btf "$kernel" "$tmp/bpftool.btf" $objs)
	# shellcheck disable=SC2086
	me=$(peak "$tmp/btfembed" min "$kernel" "$tmp/btfembed.btf" $objs)
	printf '%-24s %4d %12s %12s %10s %10s %7s\n' "$name" "$n" "$tb" "$te" "$mb" "$me" \
		"$(echo "$te $tb" | awk '{ printf "%.2f", $1 / $2 }')"
	rm -f "$kernel"
done
echo "ratio = btfembed time / bpftool time (lower is better; target <= 0.5)"

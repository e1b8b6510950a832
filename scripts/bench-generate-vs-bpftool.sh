#!/bin/sh
# Compares the CPU time of a cold "btfembed" generate run (every kernel
# minimized, then verified by cilium/ebpf's btf.CORERelocate against the
# full BTF; cache off) with a serial "bpftool gen min_core_btf" loop over
# the same kernels, which verifies nothing.
#
# Corpus and objects: scripts/bench-corpus.sh's (12 kernels, 18 objects).
# bpftool gets those it accepts on every kernel (it gives up on a
# whole kernel when one relocation is ambiguous: candidates-el.o, and
# relocs_read_tgt-el.elf, which has no CO-RE relocations). A second line
# adds testdata/objects/big (33,857 relocations in 408 functions).
#
# Both are pinned to CPU 0 (taskset -c 0) and alternate run by run; CPU
# time is perf's task-clock (user + system, all threads). Prints medians
# and the ratio btfembed/bpftool.
#
# Usage: scripts/bench-generate-vs-bpftool.sh [runs]   (default 5)
set -eu

runs=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for c in bpftool perf taskset; do
	command -v "$c" >/dev/null || { echo "$c not installed" >&2; exit 1; }
done
(cd "$root" && go build -o "$tmp/btfembed" ./cmd/btfembed)
"$root/scripts/bench-corpus.sh" "$tmp"
hub="$tmp/hub"
kernels=$(find "$hub" -name '*.btf' | sort)
objs=$(cat "$tmp/objects")

# accepted <obj...>: the objects bpftool accepts on every kernel.
accepted() {
	for o in "$@"; do
		ok=1
		for k in $kernels; do
			bpftool gen min_core_btf "$k" "$tmp/probe.btf" "$o" >/dev/null 2>&1 || { ok=0; break; }
		done
		[ "$ok" = 0 ] || echo "$o"
	done
}

# cpu <out> <cmd...>: appends the task-clock of cmd, pinned to CPU 0, in s.
cpu() {
	out=$1
	shift
	taskset -c 0 perf stat -x, -e task-clock -o "$tmp/perf" "$@" >/dev/null 2>&1
	awk -F, '/task-clock/ { printf "%.4f\n", $1 / 1000 }' "$tmp/perf" >>"$out"
}

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# compare <label> <obj...>
compare() {
	label=$1
	shift
	# shellcheck disable=SC2046
	bobjs=$(accepted "$@")
	{
		echo 'set -e'
		for k in $kernels; do
			echo "bpftool gen min_core_btf '$k' '$tmp/out.btf' $(echo $bobjs)"
		done
	} >"$tmp/loop.sh"
	rm -f "$tmp/b" "$tmp/e"
	i=0
	while [ "$i" -lt "$runs" ]; do
		cpu "$tmp/b" sh "$tmp/loop.sh"
		cpu "$tmp/e" env BTFEMBED_CACHE=off "$tmp/btfembed" -q -corpus "$hub" -pkg x -output "$tmp/x/x.go" "$@"
		i=$((i + 1))
	done
	b=$(median "$tmp/b")
	e=$(median "$tmp/e")
	printf '%-22s %7d %7d %7d %11s %11s %6s\n' "$label" "$(echo "$kernels" | wc -l)" "$#" "$(echo $bobjs | wc -w)" "$b" "$e" \
		"$(echo "$e $b" | awk '{ printf "%.2f", $1 / $2 }')"
}

echo "$runs alternating runs per tool, pinned to CPU 0; medians; load: $(uptime | sed 's/.*load/load/')"
printf '%-22s %7s %7s %7s %11s %11s %6s\n' objects kernels objs bpfobjs bpftool_cpu btfembed_cpu ratio
# shellcheck disable=SC2086
compare "objects" $objs
# shellcheck disable=SC2086
compare "objects + big" $objs "$root/testdata/objects/big/big-el.o"
echo "ratio = btfembed CPU / bpftool CPU (lower is better; target <= 0.5)"

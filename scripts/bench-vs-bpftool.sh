#!/bin/sh
# Times "btfembed min" against "bpftool gen min_core_btf" on the same
# inputs, side by side:
#  - each BTFHub kernel under testdata (decompressed once, as bpftool needs
#    raw BTF) with every little-endian test object bpftool accepts for that
#    kernel (it gives up on a whole kernel when one relocation is
#    ambiguous; btfembed does not);
#  - the big object (testdata/objects/big: 33,857 relocations, 408
#    functions) on each of those kernels.
# Both tools are pinned to one CPU (taskset -c 0) and alternate run by run,
# so both see the same machine load. Prints, per tool, the median wall
# time, the median CPU time (user + sys: on a shared machine it varies
# less than wall time) and the peak RSS, then the ratios btfembed/bpftool.
#
# Usage: scripts/bench-vs-bpftool.sh [runs]   (default 20 runs per tool)
set -eu

runs=${1:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v bpftool >/dev/null || { echo "bpftool not installed" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf not installed (apt-get install linux-perf)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time not installed (apt-get install time)" >&2; exit 1; }
(cd "$root" && go build -o "$tmp/btfembed" ./cmd/btfembed)

# now: seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }

# run <out> <cmd...>: runs cmd pinned to CPU 0 and appends to out one line:
# wall seconds, CPU seconds (user + sys, perf's task-clock: /usr/bin/time
# counts in 10 ms steps), peak RSS in MiB (/usr/bin/time).
run() {
	out=$1
	shift
	t0=$(now)
	taskset -c 0 perf stat -x, -e task-clock -o "$tmp/perf" /usr/bin/time -f %M -o "$tmp/time" "$@" >/dev/null 2>&1
	t1=$(now)
	cpu=$(awk -F, '/task-clock/ { print $1 / 1000 }' "$tmp/perf")
	echo "$t0 $t1 $cpu $(tail -n 1 "$tmp/time")" | awk '{ printf "%.4f %.4f %.1f\n", $2 - $1, $3, $4 / 1024 }' >>"$out"
}

# median <file> <column>: the median of a column of numbers.
median() {
	sort -n -k "$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# compare <label> <kernel> <obj...>: alternating runs of both tools.
compare() {
	label=$1
	kernel=$2
	shift 2
	rm -f "$tmp/b" "$tmp/e"
	i=0
	while [ "$i" -lt "$runs" ]; do
		run "$tmp/b" bpftool gen min_core_btf "$kernel" "$tmp/bpftool.btf" "$@"
		run "$tmp/e" "$tmp/btfembed" min "$kernel" "$tmp/btfembed.btf" "$@"
		i=$((i + 1))
	done
	bw=$(median "$tmp/b" 1)
	bc=$(median "$tmp/b" 2)
	bm=$(median "$tmp/b" 3)
	ew=$(median "$tmp/e" 1)
	ec=$(median "$tmp/e" 2)
	em=$(median "$tmp/e" 3)
	printf '%-36s %4d %8s %8s %7s %8s %8s %7s %6s %6s %6s\n' "$label" "$#" "$bw" "$bc" "$bm" "$ew" "$ec" "$em" \
		"$(echo "$ew $bw" | awk '{ printf "%.2f", $1 / $2 }')" \
		"$(echo "$ec $bc" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "-" }')" \
		"$(echo "$em $bm" | awk '{ printf "%.2f", $1 / $2 }')"
}

echo "$runs alternating runs per tool, pinned to CPU 0; medians; load: $(uptime | sed 's/.*load/load/')"
printf '%-36s %4s %8s %8s %7s %8s %8s %7s %6s %6s %6s\n' kernel objs bpf_s bpf_cpu bpf_MiB emb_s emb_cpu emb_MiB wall cpu rss
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
	# shellcheck disable=SC2086
	compare "$name" "$kernel" $objs
	compare "$name big-el.o" "$kernel" "$root/testdata/objects/big/big-el.o"
	rm -f "$kernel"
done
echo "ratios = btfembed / bpftool (lower is better; target <= 0.5 for wall and cpu, <= 1 for rss)"

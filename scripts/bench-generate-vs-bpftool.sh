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
# Both are pinned to one CPU and alternate run by run; CPU time is perf's
# task-clock (user + system, all threads). The CPU alternates too: run i
# is pinned to CPU i mod 2 (with two or more CPUs), because on a VM the
# vCPUs' speeds differ, and drift, by up to 40 % (docs/performance.md,
# "The two vCPUs"): a series pinned to one of them measures that vCPU.
# Prints medians and the ratio btfembed/bpftool. A second set of columns
# runs both unpinned, btfembed with 2 workers: wall time against
# bpftool's serial loop, and btfembed's CPU against its one-worker,
# one-core run (x1) and against one worker not pinned (x1u: what the
# second worker costs, without the difference pinning makes).
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

ncpu=$(nproc)

# cpu <out> <run|free> <cmd...>: appends the task-clock of cmd in s,
# pinned to CPU run mod 2 (mod 1 on a single CPU), or not pinned for free.
cpu() {
	out=$1
	pin=""
	[ "$2" = free ] || pin="taskset -c $(($2 % (ncpu < 2 ? 1 : 2)))"
	shift 2
	$pin perf stat -x, -e task-clock -o "$tmp/perf" "$@" >/dev/null 2>&1
	awk -F, '/task-clock/ { printf "%.4f\n", $1 / 1000 }' "$tmp/perf" >>"$out"
}

# timed <out> <cmd...>: appends "wall cpu" of cmd, not pinned, in s.
timed() {
	out=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@" >/dev/null 2>&1
	awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }' "$tmp/time" >>"$out"
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
	rm -f "$tmp/b" "$tmp/e" "$tmp/eu" "$tmp/bw" "$tmp/ew"
	i=0
	while [ "$i" -lt "$runs" ]; do
		cpu "$tmp/b" "$i" sh "$tmp/loop.sh"
		cpu "$tmp/e" "$i" env BTFEMBED_CACHE=off "$tmp/btfembed" -q -workers 1 -corpus "$hub" -pkg x -output "$tmp/x/x.go" "$@"
		cpu "$tmp/eu" free env BTFEMBED_CACHE=off "$tmp/btfembed" -q -workers 1 -corpus "$hub" -pkg x -output "$tmp/x/x.go" "$@"
		timed "$tmp/bw" sh "$tmp/loop.sh"
		timed "$tmp/ew" env BTFEMBED_CACHE=off "$tmp/btfembed" -q -workers 2 -corpus "$hub" -pkg x -output "$tmp/x/x.go" "$@"
		i=$((i + 1))
	done
	b=$(median "$tmp/b")
	e=$(median "$tmp/e")
	eu=$(median "$tmp/eu")
	cut -d' ' -f1 "$tmp/bw" >"$tmp/bwall"
	cut -d' ' -f1 "$tmp/ew" >"$tmp/ewall"
	cut -d' ' -f2 "$tmp/ew" >"$tmp/ecpu"
	bw=$(median "$tmp/bwall")
	ew=$(median "$tmp/ewall")
	ec=$(median "$tmp/ecpu")
	printf '%-14s %3d %4d %4d %8s %8s %5s | %8s %8s %5s %8s %5s %8s %5s\n' "$label" "$(echo "$kernels" | wc -l)" "$#" "$(echo $bobjs | wc -w)" "$b" "$e" \
		"$(echo "$e $b" | awk '{ printf "%.2f", $1 / $2 }')" "$bw" "$ew" "$(echo "$ew $bw" | awk '{ printf "%.2f", $1 / $2 }')" \
		"$ec" "$(echo "$ec $e" | awk '{ printf "%.2f", $1 / $2 }')" "$eu" "$(echo "$ec $eu" | awk '{ printf "%.2f", $1 / $2 }')"
}

echo "$runs alternating runs per tool; medians, in s; load: $(uptime | sed 's/.*load/load/')"
echo "left: pinned to one CPU (CPU 0 and 1 by turns), btfembed -workers 1 (CPU time); right: not pinned, btfembed -workers 2 (wall time, and its CPU time), and -workers 1 (its CPU time)"
printf '%-14s %3s %4s %4s %8s %8s %5s | %8s %8s %5s %8s %5s %8s %5s\n' objects krn objs bpf bpf_cpu be1_cpu ratio bpf_wall be2_wall ratio be2_cpu x1 be1u_cpu x1u
# shellcheck disable=SC2086
compare "objects" $objs
# shellcheck disable=SC2086
compare "objects + big" $objs "$root/testdata/objects/big/big-el.o"
echo "ratio: btfembed / bpftool (lower is better; issue 20's goals: <= 0.35 CPU, <= 0.5 with the big object, <= 0.25 wall with 2 workers)"
echo "x1: btfembed's CPU with 2 workers / with 1 on one CPU (goal <= 1.1); x1u: the same / with 1 worker not pinned"

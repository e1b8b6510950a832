#!/usr/bin/env bash
# Measures generate on a corpus derived by internal/cmd/benchcorpus: a cold
# run into an empty cache, an identical rerun over its outputs, and a run
# with the cache off; checks the three outputs are byte-identical; prints wall and CPU
# time (the machine may be shared: CPU time is the figure to compare),
# peak RSS, and payload bytes per kernel.
# Usage: scripts/bench-cache.sh N [raw|xz] [objects...]
# Defaults: raw, and the 14 little-endian objects of the repository
# (testdata/objects/*-el.o, internal/coremin/testdata/*-el.o, execsnoop's two).
# The corpus goes to ${BENCH_DIR:-/tmp}/btfembed-bench-N-FORMAT and is
# reused when there; nothing is written in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: $0 N [raw|xz] [objects...]}
format=${2:-raw}
shift 2 || shift $#
objs=("$@")
if [ ${#objs[@]} -eq 0 ]; then
	objs=(testdata/objects/*-el.o internal/coremin/testdata/*-el.o examples/execsnoop/bpf_*_bpfel.o)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus=${BENCH_DIR:-/tmp}/btfembed-bench-$n-$format
go build -o "$work/btfembed" ./cmd/btfembed
# The cache's stat index ignores files modified in the last two seconds
# (docs/cache.md), the fresh executable among them: a rerun of a binary
# built a moment ago would hash it again.
sleep 2
if [ ! -d "$corpus" ]; then
	go run ./internal/cmd/benchcorpus -n "$n" -format "$format" -o "$corpus"
fi

measure() { # label cache-dir output-dir
	mkdir -p "$3"
	/usr/bin/time -f "%e %U %S %M" -o "$work/time" env BTFEMBED_CACHE="$2" \
		"$work/btfembed" -q -workers 2 -corpus "$corpus" -pkg x -output "$3/x.go" -report "$3/r.json" "${objs[@]}" 2>"$work/log" ||
		{ cat "$work/log" >&2; exit 1; }
	read -r wall user sys rss <"$work/time"
	cpu=$(echo "$user + $sys" | bc)
	printf '%-6s wall %6.2f s  CPU %6.2f s (user %.2f + sys %.2f, %.2f ms per kernel)  peak RSS %4d MB  %s\n' \
		"$1" "$wall" "$cpu" "$user" "$sys" "$(echo "1000 * $cpu / $n" | bc -l)" $((rss / 1024)) "$(tail -1 "$work/log" | sed 's/: wrote.*//; s/^btfembed: //')"
}
measure cold "$work/cache" "$work/cold"
# The rerun writes over the cold run's outputs, as go generate's does.
cp -a "$work/cold" "$work/warm"
measure warm "$work/cache" "$work/warm"
measure off off "$work/off"
for f in x.go x.btfembed r.json; do
	cmp -s "$work/cold/$f" "$work/off/$f" && cmp -s "$work/warm/$f" "$work/off/$f" || { echo "$f differs between runs" >&2; exit 1; }
done
bytes=$(stat -c %s "$work/off/x.btfembed")
echo "outputs byte-identical; payload $bytes bytes for $n kernels: $((bytes / n)) bytes per kernel; cache $(du -sh "$work/cache" | cut -f1)"
echo "Select on this payload: BTFEMBED_BENCH_PAYLOADS=<payload> go test ./runtime -run X -bench SelectScale -benchtime 300x"
echo "the encoding step's peak heap: BTFEMBED_BENCH_PAYLOADS=<payload> go test ./internal/payload/encode -run X -bench EncodeScale -benchtime 3x"
cp "$work/off/x.btfembed" "${BENCH_DIR:-/tmp}/btfembed-bench-$n-$format.btfembed"
echo "payload kept as ${BENCH_DIR:-/tmp}/btfembed-bench-$n-$format.btfembed"

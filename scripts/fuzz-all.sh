#!/usr/bin/env bash
# Runs every fuzz target of the module once, one after the other, for
# TIME each (default 25s), with one fuzzing worker, and prints a Markdown
# row per target: its package, executions per second and the peak RSS of
# the largest process (/usr/bin/time's %M: the coordinator or the worker;
# go test itself is smaller). A failing input is left in the package's
# testdata/fuzz, for go test to replay and for the commit. Run it
# before landing a change to a parser (docs/threat-model.md, Fuzzing).
#
# -fuzzminimizetime is a count on purpose: with the default (60 s) a
# target that finds a new interesting input of a few KB spends its whole
# -fuzztime minimising it and executes almost nothing else (13 of 22
# targets stalled that way at 30 s), and a few seconds per input still
# leave the first minute to minimising; 100 executions per input do not.
#
# Usage: scripts/fuzz-all.sh [TIME] [TARGET-REGEXP]
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-25s}
only=${2:-.}
export BTFEMBED_CORPUS=${BTFEMBED_CORPUS:-$(cd ../shared/corpus 2>/dev/null && pwd || true)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| target | package | execs/s | peak RSS |"
echo "| --- | --- | ---: | ---: |"
fail=0
for pkg in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do
	for target in $(cat "$pkg"/*_test.go | grep "^func Fuzz" | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/' | sort -u); do
		[[ $target =~ $only ]] || continue
		log=$tmp/$target.log
		# go test builds the binary with the fuzzer's coverage
		# instrumentation (a binary from go test -c has none, and fuzzes
		# blind); the build is cached after the first target.
		corpus=$pkg/testdata/fuzz/$target
		before=$(ls "$corpus" 2>/dev/null || true)
		if ! /usr/bin/time -f 'rss %M' go test "$pkg" -run='^$' -fuzz="^$target\$" \
			-fuzztime="$time" -fuzzminimizetime=100x -parallel=1 >"$log" 2>&1; then
			# Go's fuzzing coordinator can fail a run at the end of a
			# -fuzztime duration with a bare "context deadline exceeded"
			# and no input (golang/go#75804, fixed in Go 1.27): that is
			# no finding when no new input was written and the corpus
			# replays cleanly.
			if [[ $(ls "$corpus" 2>/dev/null || true) == "$before" ]] &&
				grep -q '^    context deadline exceeded$' "$log" &&
				go test "$pkg" -run="^$target\$" >>"$log" 2>&1; then
				echo "fuzz-all: $pkg $target: the coordinator's deadline race (golang/go#75804), no input written, corpus replays clean" >&2
			else
				echo "fuzz-all: $pkg $target failed:" >&2
				tail -30 "$log" >&2
				fail=1
			fi
		fi
		# The last status line's totals: its own rate covers only the
		# moment since the line before.
		last=$(grep -o 'elapsed: [0-9]*s, execs: [0-9]*' "$log" | tail -1)
		rate=
		if [[ -n $last ]]; then
			secs=${last#elapsed: }
			secs=${secs%%s,*}
			rate=$((${last##*execs: } / (secs > 0 ? secs : 1)))
		fi
		rss=$(grep -o '^rss [0-9]*' "$log" | tail -1 | awk '{printf "%d MiB", $2/1024}')
		echo "| $target | ${pkg#./} | ${rate:-?} | $rss |"
	done
done
exit $fail

#!/usr/bin/env bash
# Runs several commands in turn, RUNS times round, and prints for each the
# median and minimum CPU time (perf's task-clock: user + system, all
# threads) and the median page faults. Alternating run by run spreads
# the machine's drift over every command (on a VM the vCPUs' speed moves
# by tens of percent within minutes: docs/performance.md).
# Usage: scripts/bench-alternate.sh RUNS LABEL 'COMMAND' [LABEL 'COMMAND'...]
# Each COMMAND is run by bash -c, its output discarded. Example:
#   scripts/bench-alternate.sh 9 one 'taskset -c 0 btfembed -workers 1 ...' two 'btfembed -workers 2 ...'
set -euo pipefail
runs=${1:?usage: $0 RUNS LABEL COMMAND [LABEL COMMAND...]}
shift
[ $# -ge 2 ] && [ $(($# % 2)) -eq 0 ] || { echo "usage: $0 RUNS LABEL COMMAND [LABEL COMMAND...]" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf not installed" >&2; exit 1; }
labels=()
cmds=()
while [ $# -gt 0 ]; do
	labels+=("$1")
	cmds+=("$2")
	shift 2
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for _ in $(seq "$runs"); do
	for j in "${!cmds[@]}"; do
		perf stat -x, -e task-clock,page-faults -o "$tmp/perf" bash -c "${cmds[$j]}" >/dev/null 2>&1 ||
			{ echo "${labels[$j]} failed: ${cmds[$j]}" >&2; exit 1; }
		awk -F, '/task-clock/ { t = $1 } /page-faults/ { f = $1 } END { print t, f }' "$tmp/perf" >>"$tmp/$j"
	done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for j in "${!cmds[@]}"; do
	printf '%-24s CPU median %8.1f ms  min %8.1f ms  faults median %7d\n' "${labels[$j]}" \
		"$(cut -d' ' -f1 "$tmp/$j" | median)" "$(cut -d' ' -f1 "$tmp/$j" | sort -n | head -1)" "$(cut -d' ' -f2 "$tmp/$j" | median)"
done

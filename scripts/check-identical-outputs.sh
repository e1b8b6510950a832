#!/bin/sh
# Checks that the working tree's btfembed writes the bytes REV's writes
# (default main): the generated Go file, the payload and the JSON report,
# with the cache off, for
#   - the testdata corpus (testdata/btfhub with testdata/corpus-extra's
#     modules) and every little-endian test object (testdata/objects,
#     internal/coremin/testdata, cilium/ebpf's CO-RE test objects, execsnoop's),
#     then the same with testdata/objects/big added;
#   - the benchmark corpus of scripts/bench-generate-vs-bpftool.sh (12
#     kernels) with the same objects;
#   - go:generate mode on examples/execsnoop (one file per GOARCH).
# A performance change must pass it unchanged.
#
# Usage: scripts/check-identical-outputs.sh [REV]
set -eu

rev=${1:-main}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/old"
git -C "$root" archive "$rev" | tar -x -C "$tmp/old"
(cd "$tmp/old" && go build -o "$tmp/btfembed-old" ./cmd/btfembed)
(cd "$root" && go build -o "$tmp/btfembed-new" ./cmd/btfembed)
"$root/scripts/bench-corpus.sh" "$tmp"
hub="$tmp/hub"
# The benchmark's objects and execsnoop's arm64 one.
objs="$(cat "$tmp/objects") $root/examples/execsnoop/bpf_arm64_bpfel.o"
big="$root/testdata/objects/big/big-el.o"

fail=0
# check <label> <corpus flags> -- <objects...>
check() {
	label=$1
	shift
	for v in old new; do
		rm -rf "$tmp/out-$v"
		mkdir "$tmp/out-$v"
		(cd "$tmp/out-$v" && BTFEMBED_CACHE=off "$tmp/btfembed-$v" -q -pkg x -output x.go -report r.json "$@" >/dev/null 2>"$tmp/log-$v") || {
			echo "$label: btfembed ($v) failed:" >&2
			cat "$tmp/log-$v" >&2
			fail=1
			return
		}
	done
	if diff -r "$tmp/out-old" "$tmp/out-new" >/dev/null; then
		echo "$label: identical ($(ls "$tmp/out-new" | wc -l) files)"
	else
		echo "$label: DIFFERENT" >&2
		diff -r "$tmp/out-old" "$tmp/out-new" | head -20 >&2
		fail=1
	fi
}

# shellcheck disable=SC2086
check "testdata corpus, objects" -corpus "$root/testdata/btfhub" -corpus "$root/testdata/corpus-extra" $objs
# shellcheck disable=SC2086
check "testdata corpus, objects + big" -corpus "$root/testdata/btfhub" -corpus "$root/testdata/corpus-extra" $objs "$big"
# shellcheck disable=SC2086
check "12-kernel corpus, objects" -corpus "$hub" $objs
# shellcheck disable=SC2086
check "12-kernel corpus, objects + big" -corpus "$hub" $objs "$big"

# go:generate mode, in each tree's examples/execsnoop (the working
# tree's copied with its uncommitted changes).
mkdir "$tmp/new"
(cd "$root" && git ls-files -co --exclude-standard | tar -T - -c) | tar -x -C "$tmp/new"
for v in old new; do
	gen="$tmp/$v/examples/execsnoop"
	rm -f "$gen"/kernelbtf_*
	(cd "$gen" && BTFEMBED_CACHE=off GOPACKAGE=main "$tmp/btfembed-$v" -q -corpus "$root/testdata/btfhub" >"$tmp/sum-$v" 2>"$tmp/log-$v") || {
		echo "go:generate mode: btfembed ($v) failed:" >&2
		cat "$tmp/log-$v" >&2
		fail=1
	}
	mkdir "$tmp/gen-$v"
	cp "$gen"/kernelbtf_* "$tmp/gen-$v"
done
if diff -r "$tmp/gen-old" "$tmp/gen-new" >/dev/null; then
	echo "go:generate mode, examples/execsnoop: identical ($(ls "$tmp/gen-new" | wc -l) files)"
else
	echo "go:generate mode, examples/execsnoop: DIFFERENT" >&2
	diff -r "$tmp/gen-old" "$tmp/gen-new" | head -20 >&2
	fail=1
fi
exit "$fail"

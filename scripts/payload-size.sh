#!/usr/bin/env bash
# Compares the size of btfembed's payload with what the shell-pipeline
# alternative ships, for the same objects and kernels:
#   (a) the per-kernel outputs of bpftool gen min_core_btf, summed;
#   (b) the same files as one solid tarball, xz -9;
#   (c) the same files as BTFHub-style per-kernel .btf.tar.xz archives;
# and, to tell the format's gain from the minimizer's, (d) btfembed min's
# own per-kernel outputs as one solid tarball, xz -9.
# Usage: scripts/payload-size.sh [corpus-dir] [objects...]
# Defaults: testdata/btfhub plus the running kernel's BTF, and every
# testdata object except candidates-el.o (bpftool gives up on its
# intentional ambiguity for the whole kernel).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v bpftool >/dev/null || { echo "needs bpftool (apt-get install bpftool)" >&2; exit 1; }

corpus=${1:-testdata/btfhub}
shift || true
objs=("$@")
if [ ${#objs[@]} -eq 0 ]; then
	for o in testdata/objects/*-el.o; do
		[ "$(basename "$o")" = candidates-el.o ] || objs+=("$o")
	done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/min" "$work/btfhub" "$work/ours"
go build -o "$work/btfembed" ./cmd/btfembed
cp -r "$corpus"/. "$work/corpus/"
if [ "$corpus" = testdata/btfhub ] && [ -r /sys/kernel/btf/vmlinux ]; then
	mkdir -p "$work/corpus/host/0/$(uname -m)"
	cp /sys/kernel/btf/vmlinux "$work/corpus/host/0/$(uname -m)/$(uname -r).btf"
fi

n=0
while IFS= read -r f; do
	rel=${f#"$work/corpus/"}
	name=$(echo "$rel" | sed 's/\.btf\.tar\.xz$//; s/\.btf$//' | tr / _)
	case "$f" in
	*.tar.xz) tar -xJOf "$f" > "$work/raw.btf" ;;
	*) cp "$f" "$work/raw.btf" ;;
	esac
	bpftool gen min_core_btf "$work/raw.btf" "$work/min/$name.btf" "${objs[@]}" >/dev/null
	"$work/btfembed" min "$work/raw.btf" "$work/ours/$name.btf" "${objs[@]}" 2>/dev/null
	(cd "$work/min" && tar -cf - "$name.btf" | xz -c > "$work/btfhub/$name.btf.tar.xz")
	n=$((n + 1))
done < <(find "$work/corpus" -name '*.btf.tar.xz' -o -name '*.btf' | sort)

a=$(cat "$work/min"/*.btf | wc -c)
b=$(cd "$work/min" && tar -cf - . | xz -9 -c | wc -c)
c=$(cat "$work/btfhub"/*.tar.xz | wc -c)
d=$(cd "$work/ours" && tar -cf - . | xz -9 -c | wc -c)

"$work/btfembed" -q -pkg x -corpus "$work/corpus" -output "$work/out.go" "${objs[@]}" 2>/dev/null
p=$(wc -c < "$work/out.btfembed")

printf 'kernels: %d, objects: %d\n' "$n" "${#objs[@]}"
printf '%-48s %8s\n' "what" "bytes"
printf '%-48s %8d\n' "(a) bpftool min_core_btf outputs, summed" "$a"
printf '%-48s %8d\n' "(b) those as one tar | xz -9" "$b"
printf '%-48s %8d\n' "(c) those as per-kernel .btf.tar.xz" "$c"
printf '%-48s %8d\n' "(d) btfembed min outputs as one tar | xz -9" "$d"
printf '%-48s %8d   (%.2fx of b, %.2fx of d)\n' "btfembed payload" "$p" "$(echo "$p / $b" | bc -l)" "$(echo "$p / $d" | bc -l)"

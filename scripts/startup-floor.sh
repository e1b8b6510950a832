#!/usr/bin/env bash
# The start-up of `btfembed version` against two references: a Go hello
# world, and "the floor", a hello world that blank-imports every package
# btfembed links from outside the module (go list -deps ./cmd/btfembed,
# less the module's own packages and the standard library's internal and
# runtime ones), so that it pays the dependencies' package inits and
# nothing of btfembed's code. Prints, for each of ROUNDS alternations
# (default 8), each program's task-clock and page faults from
# `perf stat -r 200` (docs/performance.md, "The process's start").
# Usage: scripts/startup-floor.sh [ROUNDS]
set -euo pipefail
rounds=${1:-8}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/btfembed" ./cmd/btfembed
mkdir "$work/hello" "$work/floor"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$work/hello/main.go"
printf 'module hello\n\ngo 1.25.0\n' >"$work/hello/go.mod"
{
	echo 'package main'
	echo 'import ('
	echo '	"fmt"'
	go list -deps ./cmd/btfembed |
		grep -v '^github.com/btfembed/btfembed' |
		grep -Ev '(^|/)internal(/|$)|^vendor/|^runtime|^unsafe$|^C$' |
		sed 's/.*/	_ "&"/'
	echo ')'
	echo 'func main() { fmt.Println("hello") }'
} >"$work/floor/main.go"
sed -e 's#^module .*#module floor#' -e '/^tool (/,/^)/d' go.mod >"$work/floor/go.mod"
cp go.sum "$work/floor/"
(cd "$work/hello" && go build -o ../hello.bin .)
(cd "$work/floor" && go build -o ../floor.bin .)
echo "inits: floor $(GODEBUG=inittrace=1 "$work/floor.bin" 2>&1 >/dev/null | grep -c '^init'), btfembed $(GODEBUG=inittrace=1 "$work/btfembed" version 2>&1 >/dev/null | grep -c '^init')"
for _ in $(seq "$rounds"); do
	for prog in hello.bin floor.bin "btfembed version"; do
		# shellcheck disable=SC2086 # "btfembed version" is two words
		perf stat -x, -e task-clock,page-faults -r 200 $work/$prog 2>&1 >/dev/null |
			awk -F, -v p="${prog%% *}" '{v[NR]=$1} END{printf "%-9s %6.3f ms %4d faults   ", p, v[1], v[2]}'
	done
	echo
done

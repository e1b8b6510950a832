#!/usr/bin/env bash
# What btfembed's runtime adds to an agent's binary: builds an agent twice
# for GOOS=linux GOARCH=${GOARCH:-amd64}, CGO_ENABLED=0, -trimpath, with the
# runtime and without, and prints the growth unstripped and stripped
# (-ldflags=-s), the packages only the build with the runtime links, then
# the packages that account for the growth in symbol bytes (go tool nm
# -size), largest first.
#
# The agent is, by mode:
#   execsnoop  examples/execsnoop as it is (the default): a real bpf2go
#              agent (flags, ring buffer, two programs, Selection.
#              LoadAndAssign into bpfObjects). Without the runtime, the
#              same sources build against a stand-in for the runtime
#              package that returns empty ebpf.CollectionOptions and calls
#              the spec's own LoadAndAssign, which is what bpf2go's
#              loadBpfObjects does, and embeds no payload.
#   minimal    one small cilium/ebpf agent (raise the memlock limit, load
#              a spec, attach a tracepoint), with its kernel BTF from
#              runtime.Open(payload).CollectionOptions or without; the
#              payload is examples/execsnoop's, so the growth is the
#              runtime's code.
# Usage: scripts/agent-size.sh [execsnoop|minimal]   (KEEP=1 keeps the
# binaries and says where, for readelf or go tool nm)
set -euo pipefail
mode=${1:-execsnoop}
case $mode in
execsnoop | minimal) ;;
*)
	echo "usage: $0 [execsnoop|minimal]" >&2
	exit 2
	;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
export GOOS=linux GOARCH=${GOARCH:-amd64} CGO_ENABLED=0
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then
	trap 'echo "kept $work"' EXIT
else
	trap 'rm -rf "$work"' EXIT
fi
ebpfv=$(cd "$root" && go list -m -f '{{.Version}}' github.com/cilium/ebpf)
gomod() { # $1: the module's directory, $2: where github.com/btfembed/btfembed is
	mkdir -p "$1"
	cat >"$1/go.mod" <<MOD
module agentsize

go 1.25.0

require (
	github.com/btfembed/btfembed v0.0.0
	github.com/cilium/ebpf $ebpfv
)

replace github.com/btfembed/btfembed => $2
MOD
}

minimal() { # $1: extra imports, $2: extra declarations, $3: how opts is made
	cat <<GO
package main

import (
	"log"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
$1
)
$2
func main() {
	if err := rlimit.RemoveMemlock(); err != nil {
		log.Fatal(err)
	}
	spec, err := ebpf.LoadCollectionSpec(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
$3
	coll, err := ebpf.NewCollectionWithOptions(spec, *opts)
	if err != nil {
		log.Fatal(err)
	}
	l, err := link.Tracepoint("sched", "sched_process_exec", coll.Programs["x"], nil)
	if err != nil {
		log.Fatal(err)
	}
	l.Close()
}
GO
}

# standin is the runtime API examples/execsnoop uses, done the way an
# agent without btfembed does it: cilium/ebpf alone, against the kernel's
# own BTF.
standin() {
	cat <<'GO'
// Package runtime stands in for btfembed's runtime in the build of
// examples/execsnoop without it.
package runtime

import "github.com/cilium/ebpf"

type SelectOptions struct {
	ForceEmbedded, AllowFamily bool
	HostRoot                   string
}

type Assets struct{}

type Family struct{ Reason string }

type Selection struct {
	Source, Key string
	Family      *Family
	Predicted   bool
}

type Prediction struct{}

func (Prediction) String() string { return "" }

func (*Assets) CollectionOptions(*SelectOptions) (*ebpf.CollectionOptions, *Selection, error) {
	return &ebpf.CollectionOptions{}, &Selection{Source: "kernel"}, nil
}

func (*Selection) LoadAndAssign(spec *ebpf.CollectionSpec, to any, opts *ebpf.CollectionOptions, _ any) ([]Prediction, error) {
	return nil, spec.LoadAndAssign(to, opts)
}
GO
}

case $mode in
execsnoop)
	ex=$root/examples/execsnoop
	gomod "$work/with" "$root"
	gomod "$work/without" "$work/standin"
	for f in "$ex"/*.go "$ex"/*.o; do
		case ${f##*/} in
		*_test.go) ;;
		kernelbtf_*) cp "$f" "$work/with/" ;;
		*) cp "$f" "$work/with/" && cp "$f" "$work/without/" ;;
		esac
	done
	cp "$ex"/kernelbtf_*.btfembed "$work/with/"
	cat >"$work/without/kernelbtf.go" <<'GO'
package main

import btfruntime "github.com/btfembed/btfembed/runtime"

func KernelBTF() (*btfruntime.Assets, error) { return &btfruntime.Assets{}, nil }
GO
	mkdir -p "$work/standin/runtime"
	printf 'module github.com/btfembed/btfembed\n\ngo 1.25.0\n\nrequire github.com/cilium/ebpf %s\n' "$ebpfv" >"$work/standin/go.mod"
	cp "$root/go.sum" "$work/standin/go.sum"
	standin >"$work/standin/runtime/runtime.go"
	;;
minimal)
	gomod "$work/with" "$root"
	gomod "$work/without" "$root"
	minimal '' '' '	opts := &ebpf.CollectionOptions{}' >"$work/without/main.go"
	minimal '	_ "embed"

	btfruntime "github.com/btfembed/btfembed/runtime"' '
//go:embed payload.btfembed
var payload []byte
' '	assets, err := btfruntime.Open(payload)
	if err != nil {
		log.Fatal(err)
	}
	opts, _, err := assets.CollectionOptions(nil)
	if err != nil {
		log.Fatal(err)
	}' >"$work/with/main.go"
	cp "$root/examples/execsnoop/kernelbtf_$GOARCH.btfembed" "$work/with/payload.btfembed"
	;;
esac
for v in without with; do
	(
		cd "$work/$v"
		go mod tidy >/dev/null 2>&1 || go mod tidy
		go build -trimpath -o "../$v.bin" .
		go build -trimpath -ldflags=-s -o "../$v.stripped" .
	)
done
cd "$work"
size() { stat -c %s "$1"; }
echo "$mode agent, $(go env GOVERSION) $GOOS/$GOARCH, cilium/ebpf $ebpfv"
printf 'unstripped: %d B without, %d B with: +%d B\n' "$(size without.bin)" "$(size with.bin)" $(($(size with.bin) - $(size without.bin)))
printf 'stripped:   %d B without, %d B with: +%d B\n' "$(size without.stripped)" "$(size with.stripped)" $(($(size with.stripped) - $(size without.stripped)))
deps() { (cd "$work/$1" && go list -deps . | grep -v '^agentsize$' | sort); }
echo "packages only the runtime brings:" $(comm -13 <(deps without) <(deps with))
echo "growth in symbol bytes by package (go tool nm -size; pclntab and DWARF come on top):"
bypkg() {
	# The package is the name up to the first dot after its last slash.
	go tool nm -size "$1" | awk '{name=$4; sub(/[[(].*$/, "", name); dir=""; if (match(name, /.*\//)) {dir=substr(name, 1, RLENGTH); name=substr(name, RLENGTH+1)} sub(/\..*$/, "", name); s[dir name]+=$2} END {for (k in s) print k, s[k]}' | sort
}
join -a 2 -e 0 -o 0,1.2,2.2 <(bypkg without.bin) <(bypkg with.bin) | awk '{d=$3-$2; if (d >= 2048) printf "%8d  %s\n", d, $1}' | sort -rn | head -15

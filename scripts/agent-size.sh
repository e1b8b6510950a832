#!/usr/bin/env bash
# What btfembed's runtime adds to an agent's binary: builds the same small
# cilium/ebpf agent (load a spec, raise the memlock limit, attach a
# tracepoint) twice for GOOS=linux GOARCH=${GOARCH:-amd64}, CGO_ENABLED=0,
# once with kernel BTF from runtime.Open(payload).CollectionOptions and
# once without, and prints the growth unstripped and stripped (-ldflags=-s),
# then the packages that account for the growth in symbol bytes
# (go tool nm -size), largest first. The payload is examples/execsnoop's,
# so the figure is the runtime's code, not the embedded BTF.
# Usage: scripts/agent-size.sh   (KEEP=1 keeps the two binaries and
# says where, for readelf or go tool nm)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GOOS=linux GOARCH=${GOARCH:-amd64} CGO_ENABLED=0
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then
	trap 'echo "kept $work"' EXIT
else
	trap 'rm -rf "$work"' EXIT
fi
ebpfv=$(cd "$root" && go list -m -f '{{.Version}}' github.com/cilium/ebpf)
mkdir -p "$work/with" "$work/without"
cat >"$work/go.mod" <<MOD
module agentsize

go 1.25.0

require (
	github.com/btfembed/btfembed v0.0.0
	github.com/cilium/ebpf $ebpfv
)

replace github.com/btfembed/btfembed => $root
MOD
agent() { # $1: extra imports, $2: extra declarations, $3: how opts is made
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
agent '' '' '	opts := &ebpf.CollectionOptions{}' >"$work/without/main.go"
agent '	_ "embed"

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
cp "$root/examples/execsnoop/kernelbtf_amd64.btfembed" "$work/with/payload.btfembed"
cd "$work"
go mod tidy >/dev/null 2>&1 || go mod tidy
for v in without with; do
	go build -trimpath -o "$v.bin" "./$v"
	go build -trimpath -ldflags=-s -o "$v.stripped" "./$v"
done
size() { stat -c %s "$1"; }
printf 'unstripped: %d B without, %d B with: +%d B\n' "$(size without.bin)" "$(size with.bin)" $(($(size with.bin) - $(size without.bin)))
printf 'stripped:   %d B without, %d B with: +%d B\n' "$(size without.stripped)" "$(size with.stripped)" $(($(size with.stripped) - $(size without.stripped)))
echo "growth in symbol bytes by package (go tool nm -size; pclntab and DWARF come on top):"
bypkg() {
	go tool nm -size "$1" | awk '{name=$4; sub(/\(.*$/, "", name); sub(/\.[^.\/]*$/, "", name); s[name]+=$2} END {for (k in s) print k, s[k]}' | sort
}
join -a 2 -e 0 -o 0,1.2,2.2 <(bypkg without.bin) <(bypkg with.bin) | awk '{d=$3-$2; if (d >= 2048) printf "%8d  %s\n", d, $1}' | sort -rn | head -15

package main

import (
	"os"
	"runtime/debug"
)

// setMemoryLimit gives the Go runtime a soft memory limit for a run with
// this many workers, unless $GOMEMLIMIT sets one: 40 MiB for the run
// itself plus 56 MiB for each kernel in flight (its raw BTF, the lazy
// index over it and cilium/ebpf's full decode for the oracle). Most of
// what a run allocates is garbage soon (a decoded kernel, the payload
// encoder's tables), and with the default GOGC the heap may grow to twice
// what is live, which made peak memory grow with the number of kernels;
// the limit makes the collector run before that. It is soft: a run that
// needs more gets it, at the cost of more collections.
func setMemoryLimit(workers int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(int64(40+56*max(workers, 1)) << 20)
}

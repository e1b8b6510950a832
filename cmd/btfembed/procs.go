package main

import (
	"os"
	"runtime"
)

// limitProcs lowers GOMAXPROCS to workers for the rest of a command, when
// -workers asks for fewer than GOMAXPROCS and $GOMAXPROCS sets nothing,
// and returns what puts the default back.
//
// The workers are the command's parallelism; the other processors would
// only be idle. Go's collector gives an idle processor to a mark worker
// for the whole of every mark phase, so a run with fewer workers than
// processors paid for collection twice over: generate -workers 1 on the
// 12-kernel corpus, 2 CPUs, unpinned, took 54-69 ms of collector CPU
// against 23-25 ms (GODEBUG=gctrace=1), 641 against 565 ms of CPU in all
// (9 alternating runs), and on the .btf.tar.xz corpus 1.80-1.84 s wall
// against 1.61-1.63 s.
func limitProcs(workers int) (restore func()) {
	if workers <= 0 || workers >= runtime.GOMAXPROCS(0) || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	runtime.GOMAXPROCS(workers)
	return runtime.SetDefaultGOMAXPROCS
}

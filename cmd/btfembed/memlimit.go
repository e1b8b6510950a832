package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/btfembed/btfembed/internal/extract"
)

// setMemoryLimit gives the Go runtime a soft memory limit for a run with
// this many workers on these objects, unless $GOMEMLIMIT sets one: 40
// MiB for the run itself, objectHeap bytes per byte of the objects (their
// loaded form lives for the whole run), plus 56 MiB for each kernel in
// flight (its raw BTF, the lazy index over it and cilium/ebpf's load of
// it for the oracle, with the types relocations reach decoded). Most of
// what a run allocates is garbage soon (a decoded kernel), and with the
// default GOGC the heap may grow to twice what is live, which made peak
// memory grow with the number of kernels; the limit makes the collector
// run before that. It is soft: a run that needs more gets it, at the
// cost of more collections.
func setMemoryLimit(workers int, objects []string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	var objBytes int64
	for _, o := range objects {
		if st, err := os.Stat(o); err == nil {
			objBytes += st.Size()
		}
	}
	debug.SetMemoryLimit(int64(40+56*max(workers, 1))<<20 + objectHeap*objBytes)
}

// objectHeap is about how many bytes of heap a byte of BPF object takes
// loaded: cilium/ebpf's collection, corereloc's relocations, the
// relocation groups and the predictions kept per object. Without it the
// limit sat close to the live heap of the 4.3 MB big test object and the
// collector ran all the time. 12 kernels with the big object, one core,
// 4 alternating runs (task-clock, a noisy machine): medians 2.38 s of
// CPU without this term, 2.17 s with it, 2.13 s with no limit at all;
// peak RSS 107, about 160 and 168 MB. Small objects add next to nothing.
const objectHeap = 16

// minFirstCollection is the memory at which "btfembed min" first collects.
// A raw kernel BTF and its objects need 6-12 MB of heap, almost all of it
// live to the end, and the kernel's BTF is one fresh allocation that no
// freed memory can serve: a collection before it is read frees nothing
// worth having, and on the big test object it cost 0.6 MiB of peak RSS
// (the collector's own memory) and 10-25% more CPU. Inputs that need more
// (kernel images, decompressed whole) are collected as usual past it.
const minFirstCollection = 64 << 20

// deferCollection turns the collector off until the Go runtime holds
// limit bytes, then restores the defaults (GOGC=100, no memory limit),
// unless $GOGC or $GOMEMLIMIT sets them.
func deferCollection(limit int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	// The first collection, which the limit triggers, finds the sentinel
	// unreachable and queues the cleanup. 64 bytes: tiny objects may be
	// batched with live ones and never be collected.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(struct{}) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}, struct{}{})
}

// importMemoryLimit is the soft memory limit of "btfembed corpus import".
// Package extract's memory budget bounds the decompressed bytes all
// readers hold together (two streams at their cap, 2 x extract.MaxImage
// = 768 MiB), that is the live heap only: with the default GOGC the
// collector let the heap grow to twice what was live, and issue 33's 139
// KB .deb whose eleven modules are 380 MiB of zeros each peaked at 1.97 GB
// (the same modules in a 142 KB RPM: 1.58 GB). The limit
// sits under the budget, so that the collector frees a member just
// released before the next one is copied into one piece: measured on
// that package (GOMEMLIMIT set by hand, /usr/bin/time), limits of 704 to
// 768 MiB peaked at 800-810 MB, 800 MiB and more at 1.19 GB with three
// times the CPU (the scavenger thrashing). Real imports stay far below it
// (a cold Debian -dbg import with 4,136 modules: 478 MB), so it costs
// them nothing; one that needs more gets it, with more collections.
const importMemoryLimit = 2*extract.MaxImage - 64<<20

// setImportMemoryLimit sets importMemoryLimit, unless $GOMEMLIMIT sets a
// limit ("off" for none).
func setImportMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(importMemoryLimit)
}

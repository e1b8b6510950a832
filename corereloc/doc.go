// Package corereloc minimizes a kernel's BTF for the CO-RE relocations of
// BPF objects and checks the result: what "bpftool gen min_core_btf"
// (BTFGen) does, in Go, for every relocation kind, for vmlinux and its
// modules together.
//
//	objs, _ := corereloc.Load("prog.o")                      // .BTF + .BTF.ext
//	min, _ := corereloc.Minimize(objs, vmlinuxBTF, moduleBTF) // raw kernel BTF
//	err := corereloc.Verify(objs, full, minimized)           // the oracle
//
// Load reads the objects' relocations into an Object. Minimize resolves
// every relocation against the kernel's BTF the way cilium/ebpf's
// btf.CORERelocate does and keeps what the resolution read, so that every
// relocation gives the same fixup, miss or error with the output as with
// the full BTF, for cilium/ebpf and for libbpf; the Minimized it returns
// holds the BTF and the relocations that are ambiguous or fail on that
// kernel. Verify is the judge: it runs cilium/ebpf's own relocation
// against both BTFs and returns an error wrapping ErrMismatch for any
// difference. Where the output differs from bpftool's, docs/min-core-btf.md
// says why.
//
// The machinery (the .BTF.ext reader, the candidate matching, the
// minimizer and the oracle the generator asks per kernel) is in the
// module's internal/coremin; this package is its face for a Go program
// that minimizes BTF itself, as `btfembed min` does.
package corereloc

// Package coremin reads the CO-RE relocations of BPF objects, resolves
// them against a kernel's BTF the way github.com/cilium/ebpf does, and
// writes the smallest BTF that resolves them the same way: what
// "bpftool gen min_core_btf" (BTFGen) does, in Go, for every relocation
// kind, and checked.
//
// The pipeline is
//
//	objs, _ := coremin.Load("prog.o")                   // .BTF + .BTF.ext
//	vmlinux, _ := coremin.NewTarget(vmlinuxBTF, nil)    // raw kernel BTF
//	module, _ := coremin.NewTarget(moduleBTF, vmlinux)  // split over it
//	res, _ := coremin.Match(objs, []*coremin.Target{vmlinux, module})
//	vmlinuxMin, modulesMin, _ := coremin.Minimize(res)
//	mismatches, _ := coremin.Verify(objs, full, minimized) // the oracle
//
// Load reads clang's .BTF.ext records (struct bpf_core_relo in the
// kernel's include/uapi/linux/bpf.h; the format is described in
// Documentation/bpf/btf.rst and llvm's BTF.h). Match reimplements
// cilium/ebpf's btf.CORERelocate (btf/core.go, itself derived from libbpf's
// relo_core.c): candidates are all target types with the local type's
// essential name (the name without a "___flavour" suffix), vmlinux first
// then each module; each relocation is computed against each candidate
// (field paths through anonymous members, arrays, bitfields; type
// compatibility and type matching; enumerators); per program and local
// type the candidate with the fewest misses wins and ties must agree.
// While it computes, it records which target types, members and
// enumerators each computation read, on BTF views (internal/rawbtf) that
// decode only those types: a kernel is indexed in one pass, never decoded
// whole.
//
// Minimize keeps every candidate that fits at least one relocation (but
// those another candidate decides for alike), with what its computations
// read, so that every relocation gives the same fixup, miss or error with
// the output as with the full BTF, for cilium/ebpf and for libbpf: where
// the two search differently (libbpf looks for members depth first, with
// another depth limit), it keeps the path each one takes. Where that needs
// more or less than bpftool keeps, docs/min-core-btf.md says why. Verify
// is the judge: it runs cilium/ebpf's own btf.CORERelocate against both
// BTFs and reports every difference; the tests let libbpf judge too
// (internal/libbpftest).
//
// # API
//
// It is internal so that the public package corereloc can show a user
// three calls (Load, Minimize, Verify) while the generator and the load
// prediction (internal/predict), which walk relocations per program and
// kernel, use what is below; everything exported serves them or
// corereloc's face:
//   - Load and LoadFromReader read objects into an Object: its Relocation
//     records (Kind, local type, access string), the Site of each relocated
//     instruction and the Function holding it. ProgramRelocations lists a
//     program's relocated instructions as cilium/ebpf loads it, each a
//     ProgramRelocation tying cilium/ebpf's relocation to the Relocation
//     record (the load prediction and the generator's relocation groups
//     walk them per kernel), and Describe names one for people.
//   - NewTarget indexes a kernel's raw BTF, vmlinux or module split over
//     it, as a Target.
//   - Match resolves every relocation against targets into a Result: per
//     site an Outcome with a Status (resolved, missing, ambiguous,
//     failed), the candidate TypeRef it took, and which Sites (SiteRef)
//     each target type served. ErrAmbiguous is what an ambiguous one
//     wraps.
//   - Minimize writes the BTF the Result needs.
//   - Verify is the oracle: it compares cilium/ebpf's fixups against the
//     full and the minimized BTF and reports each difference as a
//     Mismatch. NewOracle builds the Oracle behind it for callers that
//     verify many kernels with the same objects (the generator): it reads
//     the objects' programs once, and its Answers are the fixups per
//     object and program that the load prediction reuses instead of
//     asking cilium/ebpf again (Answers.AppendFixups into one slice it
//     reuses, as it asks for every program on every kernel).
package coremin

// Package corpus reads kernel BTF corpora and imports kernel BTF from what
// distributions ship.
//
// A corpus is one or more directory trees in the layout of
// aquasecurity/btfhub-archive,
//
//	<distro>/<version>/<arch>/<release>.btf.tar.xz   (tar member <release>.btf)
//
// plus files in other shapes (raw .btf, .btf.xz, .btf.zst, .btf.gz, an ELF
// vmlinux with a .BTF section) and, as our own extension, kernel-module BTF
// in a directory beside the kernel:
//
//	<distro>/<version>/<arch>/<release>.modules/<name>.{btf,btf.zst,btf.xz,btf.gz,ko,ko.xz,ko.zst,ko.gz}
//
// docs/corpus.md in the repository documents the layout in full.
//
// [Read] walks the roots and yields one [Kernel] at a time, sorted by key,
// decompressing and validating with all cores while never holding more than a
// few kernels in memory. A kernel that cannot be read is reported as a
// [*KernelError] and the stream goes on, unless [Options.Strict] is set.
//
// [ReadBTF] reads the BTF of one file in any of these forms, found from its
// contents: raw BTF, a BTFHub archive, an ELF vmlinux or kernel module (with
// its distilled base, .BTF.base, when it has one) or a kernel image.
// [ParseBTF] does the same for contents the caller already has in memory.
// The commands that take a single kernel or module (min, distill,
// relocate, inspect) map the file and use ParseBTF: on a virtual machine
// that costs a sixth of reading it into fresh memory (docs/performance.md).
// A program that fetched a kernel's BTF over the network has it as bytes.
//
// [Import] builds a corpus from kernel packages (.deb), kernel images (x86
// bzImage with any payload compression, arm64 Image and Image.gz, EFI zboot),
// ELF vmlinux files, raw BTF and /sys/kernel/btf/vmlinux. The BTF it writes is
// byte-identical to the .BTF section of the kernel. Kernels built without BTF
// are imported from their DWARF (a debug vmlinux, a Debian -dbg package)
// through [importDWARF], which runs pahole as the kernel's build would and
// caches the result by the input's digest; readers of other containers
// (RPM) call it too.
//
// Finding BTF inside files (decompression, kernel images, ELF, packages)
// is internal/extract; raw BTF is validated with internal/rawbtf; this
// package never decodes types. With Options.FullSpecs it has cilium/ebpf
// load each kernel's BTF as it reads it (Kernel.FullSpec), for a caller
// that needs cilium/ebpf's view of every kernel (the generator's
// oracle): a raw BTF file is then read once, into the buffer cilium/ebpf
// keeps, instead of twice.
//
// # Who calls it
//
// The generator reads corpora with Read and Options, streaming Kernel
// values (each with its vmlinux File and Module files, and with FullSpecs
// cilium/ebpf's FullSpec of it); with Options.Hold it gives each one back
// with Kernel.Release when its worker is done, so that no more than
// Options.Workers kernels are in memory. `btfembed corpus ls` lists a
// corpus with List (an Entry per kernel and its Summary, without decoding
// it; Entry.Read reads it in full); `btfembed min`, `distill`, `relocate`
// and `inspect` read one kernel or module with ParseBTF on a mapped file
// (a File), and tests with ReadBTF; internal/dwarfkernel, internal/cmd/benchcorpus and the VM
// tests use Read and Import; KernelPath and ModulesPath say where a kernel
// and its modules go in the layout. KernelError is one kernel of a stream
// that could not be read; its message names the file and what is wrong
// with it (no BTF, an unknown format, a module without its base, a key the
// path does not give, a cap for untrusted input), which no caller branches
// on.
//
// The package is internal since issue 34: a program outside the module
// imports kernels through generator/corpus, the public face of Import
// (ImportOptions, ImportResult, Imported and KernelError are aliased
// there), and reads corpora through generator.Generate. Nothing here may
// import that face (internal/depcheck).
package corpus

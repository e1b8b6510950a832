// Package corpus imports kernel BTF into a corpus: what
// `btfembed corpus import` does, for a program that builds its corpus
// itself (a release pipeline that fetches the kernel packages of the
// distributions it supports, say, and runs the generator on the result).
//
// [Import] reads kernel packages (.deb, .rpm), kernel images (x86 bzImage
// with any payload compression, arm64 Image and Image.gz, EFI zboot), ELF
// vmlinux files, raw or compressed BTF, BTFHub archive files, corpus
// directories and /sys/kernel/btf/vmlinux, and writes each kernel it finds
// into a directory in the layout of aquasecurity/btfhub-archive, with the
// kernel's module BTF beside it (docs/corpus.md in the repository has the
// layout in full):
//
//	<distro>/<version>/<arch>/<release>.btf.tar.xz
//	<distro>/<version>/<arch>/<release>.modules/<name>.btf.zst
//
// The BTF written is byte-identical to the kernel's .BTF section. A kernel
// built without BTF is made from its DWARF (a debug vmlinux, a Debian -dbg
// package, a kernel-debuginfo RPM) by pahole, as the kernel's build would,
// and cached by the input's digest when [ImportOptions] names a cache.
//
// # API
//
// A program calls [Import] with [ImportOptions] (nil means the defaults:
// every core, modules included, bad inputs skipped) and gets an
// [ImportResult]: the [Imported] kernels, each with the key it was filed
// under and what told that key (Imported.KeyFrom, a guess a program should
// show, as the command does), and the inputs skipped, each a
// [*KernelError] whose Path names the input, kernel or module, for a
// program that reports or retries them by file. These five names are the
// whole face.
//
// The implementation, with the corpus reader the generator and the
// command's `corpus ls`, `min`, `distill` and `inspect` use, is in the
// module's internal/corpus. Reading a corpus back is the generator's job
// (generator.Generate reads the directories in Args.Corpus), and listing one is
// `btfembed corpus ls`'s, so neither is public: no program outside this
// module has been seen to need them.
//
// ImportOptions, ImportResult, Imported and KernelError are type aliases
// of internal/corpus's types rather than types of their own. The
// alternative is a second struct of each, copied field by field into the
// internal one on the way in and back out of it on the way out (eight
// option fields, six per kernel, a KernelError rebuilt per skipped input,
// and every new field added twice), for types that hold only standard
// library values and runtime.Key. Their fields and methods are listed here,
// in the alias's doc comment, because `go doc` of an alias does not show
// them.
package corpus

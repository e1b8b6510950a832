// Package runtime reads the BTF that btfembed embeds in a Go program and
// picks the right kernel's at start-up.
//
// CO-RE eBPF programs need the running kernel's BTF to be relocated. Many
// kernels in the field do not expose /sys/kernel/btf/vmlinux, so btfembed's
// generator stores, for every kernel of a corpus, the minimal BTF the
// program's relocations need, in one payload embedded with //go:embed. This
// package opens that payload and selects BTF for the running kernel:
//
//  1. the kernel's own /sys/kernel/btf/vmlinux when present, unless
//     SelectOptions.ForceEmbedded;
//  2. the embedded entry for the kernel's architecture (uname -m, see
//     kernelkey.NormalizeArch) and release (uname -r), disambiguated by os-release ID
//     and VERSION_ID when several distributions ship the same release;
//  3. otherwise an error wrapping ErrKernelNotSupported that names arch,
//     release and distribution.
//
// Only the chosen entry is decompressed and parsed, once per Assets (while
// its decode budget keeps it), however many goroutines ask. Agents in containers set SelectOptions.HostRoot to
// where the host's / is mounted. A corrupt payload gives an error wrapping
// ErrCorrupt, never a panic.
//
// What the runtime hands out has been checked: every name offset and type
// reference of the embedded BTF, and every type decoded once by
// cilium/ebpf before the spec is returned, so the agent's CO-RE relocation
// never meets a type cilium/ebpf cannot decode; verdict kinds are words
// of the documented set and names are printable, or the payload is
// corrupt, and reasons reach Prediction with control characters escaped.
//
// Memory is bounded by one decode budget per Assets (OpenOptions.DecodeBudget,
// DefaultDecodeBudget of 32 MiB), across calls: the index blocks,
// dictionaries and verdicts it keeps, the kernels it keeps loaded, and
// what the call in progress holds, each charged what it occupies in
// memory before it is allocated (decoded records, cilium/ebpf's decoded
// types, copies of their names, the decoder's stack). A payload that needs
// more is treated as corrupt, so a crafted payload of a few KB fails fast
// instead of taking gigabytes.
//
// # Selection outcomes
//
// Select returns a Selection or an error, never both and never neither,
// whatever the host's files are. Paths are under HostRoot.
//
//   - sys/kernel/btf/vmlinux is a readable regular file with valid BTF:
//     SourceKernel. os-release does not matter, even if it is missing,
//     unreadable or not a regular file.
//   - sys/kernel/btf is missing, or has no vmlinux (a kernel built without
//     CONFIG_DEBUG_INFO_BTF, or older than 5.x): the embedded BTF, as below.
//   - vmlinux exists but cannot be used (unreadable, corrupt, empty, a
//     FIFO, directory, device or symlink): the embedded BTF; if there is
//     none either, the error joins both reasons. Files are checked with
//     lstat and opened non-blocking, so a FIFO never hangs Select.
//   - The release is embedded once: that entry, whatever the distribution
//     os-release names (a release string names one build).
//   - The release is embedded for several distributions: os-release's ID
//     picks, then each ID_LIKE in order (an entry for ubuntu serves
//     linuxmint, whose ID_LIKE names ubuntu), then VERSION_ID. Entries that
//     carry the same BTF need no choice. When os-release is missing,
//     unreadable or names none of them, the error (ErrKernelNotSupported)
//     lists the distributions embedded and, if os-release could not be
//     read, why.
//   - The release is not embedded: an error wrapping ErrKernelNotSupported
//     naming arch, release and distribution, and the `btfembed corpus
//     import` command that adds this release to the corpus.
//
// Module BTF files of the kernel (sys/kernel/btf/<module>) follow the same
// rules; one that exists but cannot be used makes the kernel's BTF
// unusable, and the embedded entry (which carries the module) is used.
//
// Program types that attach by BTF ID (tp_btf, fentry, fexit, fmod_ret,
// lsm, iter, struct_ops, freplace) need the kernel's own BTF to attach and
// cannot run on a kernel without it, whatever BTF is embedded: embedded BTF
// serves CO-RE relocations only. The VM tests (internal/vmtest) boot the
// corpus's kernels with /sys/kernel/btf hidden and check, with this package
// selecting on its own, that every program of any other type that loads
// with the kernel's BTF also loads with the embedded BTF; programs of these
// types are left out of that comparison.
//
// # Load predictions
//
// The generator predicts, for every embedded kernel, which programs will
// not load there (a CO-RE relocation reached, a helper, map type or kfunc
// the kernel lacks, ...), and the payload carries those verdicts. A
// Selection of an embedded entry lists them (Predicted, Predictions);
// Selection.Prune removes those programs, and the maps only they use,
// from a CollectionSpec, and Selection.LoadAndAssign loads the rest into
// bpf2go's objects struct, leaving the skipped programs' fields nil. A
// selection of the kernel's own BTF predicts nothing: btfembed analysed
// the corpus's kernels, not this build. docs/runtime.md has the details.
//
// # Payload format
//
// The payload format is defined once, with its design, in the module's
// internal/payload package, which both the generator's encoder and this
// package use. An agent links only its decoder, the standard library's
// compress/flate, which cilium/ebpf's debug/elf links anyway. Blobs are
// stored once by content, BTF goes through a reversible column transform
// that makes similar kernels' BTF alike, and blobs of one role share
// DEFLATE preset dictionaries, so structure common to many kernels is stored once while
// an entry decompresses on its own: at most two dictionaries, then at most
// one frame.
//
// # Modules
//
// An entry may carry module BTF for ebpf.ProgramOptions.ExtraRelocationTargets.
// Split BTF without a distilled base is read directly over the entry's
// vmlinux. Split BTF with a distilled base (.BTF.base, which the generator
// writes for every module) is relocated onto the selected vmlinux BTF with
// the semantics of libbpf's btf__relocate (internal/btfrelocate): onto the
// embedded vmlinux, or onto the kernel's own when the kernel has vmlinux
// BTF but none for the module. Selection.Modules holds the results.
//
// # API
//
// The exported names are what the generated code and an agent call; each
// is listed with who calls it and why. Everything else (the payload
// format, module relocation, os-release parsing) is internal.
//
//   - Open: the generated KernelBTF function calls it on the embedded
//     payload. OpenWithOptions, OpenOptions and DefaultDecodeBudget: for
//     an agent that bounds decoding memory below the default.
//   - Assets: what Open returns; an agent calls its CollectionOptions
//     (the usual start-up call), Select (BTF alone), Kernels and Lookup
//     (what is embedded, for diagnostics and tests).
//   - SelectOptions: an agent's overrides: ForceEmbedded, HostRoot in a
//     container, the kernel's identity in tests.
//   - Selection: the chosen BTF (Source, Key, Spec, Modules), the load
//     predictions (Predicted, Predictions) and the calls acting on them:
//     Prune, LoadAndAssign, and ModuleSpecs for an agent that builds its
//     own ebpf.CollectionOptions from Select.
//   - Source: where a Selection's BTF came from (SourceKernel or
//     SourceEmbedded), for the agent's log line.
//   - Key: an embedded kernel's identity, in Selection.Key, Kernels and
//     Lookup (package kernelkey's Key, so corpus tools share it).
//   - Prediction, Verdict: one program predicted not to load, in
//     Selection.Predictions and the results of Prune and LoadAndAssign.
//     PruneOptions tunes those two.
//   - ErrKernelNotSupported, NotSupportedError: an agent tells "this
//     kernel is not in the corpus" from other failures (errors.Is), and
//     reads which kernel and why (errors.As).
//   - ErrCorrupt: an agent tells a damaged payload from an unsupported
//     kernel.
//
// # Example
//
// The package's name shadows the standard library's runtime, so it is
// always imported as btfruntime, as the generated code does:
//
//	import btfruntime "github.com/btfembed/btfembed/runtime"
//
// In a package where btfembed generated kernelbtf.go (which embeds the
// payload as kernelBTF):
//
//	assets, err := btfruntime.Open(kernelBTF)
//	if err != nil {
//		return err
//	}
//	opts, sel, err := assets.CollectionOptions(nil)
//	if errors.Is(err, btfruntime.ErrKernelNotSupported) {
//		return fmt.Errorf("this kernel is not in the agent's corpus: %w", err)
//	} else if err != nil {
//		return err
//	}
//	log.Printf("CO-RE against %s BTF of %s", sel.Source, sel.Key)
//	coll, err := ebpf.NewCollectionWithOptions(spec, *opts)
package runtime

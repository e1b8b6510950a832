// Package runtime reads the BTF that btfembed embeds in a Go program and
// picks the right kernel's at start-up.
//
// CO-RE eBPF programs need the running kernel's BTF to be relocated. Many
// kernels in the field do not expose /sys/kernel/btf/vmlinux, so btfembed's
// generator stores, for every kernel of a corpus, the minimal BTF the
// program's relocations need, in one payload embedded with //go:embed. This
// package opens that payload and selects BTF for the running kernel:
//
//  1. a BTF file the user supplies, SelectOptions.BTFFile or else
//     $BTFEMBED_BTF_FILE (BTFFileEnv), as libbpf's btf_custom_path;
//  2. the kernel's own /sys/kernel/btf/vmlinux when present, unless
//     SelectOptions.ForceEmbedded;
//  3. the embedded entry for the kernel's architecture (uname -m, in
//     BTFHub's spelling) and release (uname -r), disambiguated by os-release ID
//     and VERSION_ID when several distributions ship the same release;
//  4. otherwise an error wrapping ErrKernelNotSupported that names arch,
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
// whatever the host's files are. Paths are under HostRoot, except the BTF
// file's, which is the agent's.
//
//   - A BTF file is named (BTFFile, else $BTFEMBED_BTF_FILE unless
//     ForceEmbedded): SourceFile, whatever the kernel and the payload
//     have, or an error naming the file, never a fallback. The file must
//     be a regular file, not a symbolic link, of at most 32 MiB, opened
//     non-blocking (a FIFO never hangs Select), and raw BTF that passes
//     the payload's checks and decodes in full within 512 MiB; its errors
//     do not wrap ErrCorrupt, since the payload is not at fault. Setting
//     BTFFile with ForceEmbedded is an error.
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
//     naming arch, release and distribution, and the `go tool btfembed
//     corpus import` command that adds this kernel to the agent's corpus:
//     from the distribution's debug package (Debian's
//     linux-image-<release>-dbg, Ubuntu's
//     linux-image-unsigned-<release>-dbgsym, RHEL's kernel-debuginfo)
//     where the kernel has no BTF of its own, since its image has none
//     either; from its /sys/kernel/btf/vmlinux where it has (the embedded
//     BTF forced).
//   - The release is not embedded, but the payload records its family
//     (Family: Debian 12's 6.1.0-*-amd64) as stable for its
//     objects: with SelectOptions.AllowFamily, the BTF of the family's
//     nearest older member (SourceFamily; Selection.Family says which,
//     and what is assumed); without, the error says the family would
//     serve it.
//
// Module BTF files of the kernel (sys/kernel/btf/<module>) follow the same
// rules; one that exists but cannot be used makes the kernel's BTF
// unusable, and the embedded entry (which carries the module) is used.
// With a BTF file, modules come from the embedded entry only, relocated
// onto the file's BTF: the kernel's module BTF refers to the kernel's
// vmlinux BTF by type ID, not to the file's.
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
// bpf2go's objects struct, leaving the skipped programs' fields nil.
//
// A selection of the kernel's own BTF carries the verdicts of the entry
// that Select would have chosen without it (same architecture and
// release, the distribution told apart as above), and says so
// (Selection.PredictionsFrom): the generator computed them from that
// release's full BTF, the very BTF the kernel exposes, so they hold with
// it too. That rests on the assumption every embedded selection makes,
// that a release string names one build; a kernel built from other
// sources under an embedded release string defeats it. The cost is the
// lookup of one index block and the verdicts frame, both small and
// decoded once per Assets (BenchmarkSelectKernel). A kernel the payload
// does not embed predicts nothing: the runtime does not guess from a
// nearby release. Nor does a BTF file the user supplies: it is supplied
// where the embedded BTF is not this kernel's. docs/runtime.md has the
// details.
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
// That relocation is in package runtime/modules, not here, so that an
// agent whose payload embeds no module BTF, most of them, does not link it
// (about 70 KB). The generated code imports runtime/modules for its side
// effect exactly when its payload embeds module BTF; Open refuses such a
// payload in an agent that does not link it, with an error that says to
// run go generate, rather than serve kernels without their modules.
//
// # API
//
// The exported names are what the generated code and an agent call; each
// is listed with who calls it and why. Everything else (the payload
// format, module relocation, os-release parsing) is internal.
//
//   - Open: the generated KernelBTF function calls it on the embedded
//     payload. OpenWithOptions, OpenOptions and DefaultDecodeBudget: for
//     an agent that bounds decoding memory below the default, and for the
//     generated code, which names its Go file (OpenOptions.GoFile) for
//     Check's error.
//   - Assets: what Open returns; an agent calls its CollectionOptions
//     (the usual start-up call), Select (BTF alone), Kernels and Lookup
//     (what is embedded, for diagnostics and tests).
//   - SelectOptions: an agent's overrides: BTFFile for an operator's BTF,
//     ForceEmbedded, HostRoot in a container, the kernel's identity in
//     tests. BTFFileEnv: the variable an agent's help names, as it does
//     its own flags.
//   - Selection: the chosen BTF (Source, Key, File, Spec, Modules), the
//     load predictions (Predicted, PredictionsFrom, Predictions) and the
//     calls acting on them:
//     Prune, LoadAndAssign, and ModuleSpecs for an agent that builds its
//     own ebpf.CollectionOptions from Select.
//   - Source: where a Selection's BTF came from (SourceKernel,
//     SourceEmbedded, SourceFile or SourceFamily), for the agent's log line.
//   - Key: an embedded kernel's identity, in Selection.Key, Kernels and
//     Lookup, and in generator/corpus's import results, so corpus tools
//     and agents share one type. Family: the series a kernel belongs to,
//     in FamilySelection.
//   - Prediction, Verdict: one program predicted not to load, in
//     Selection.Predictions and the results of Prune and LoadAndAssign.
//     PruneOptions tunes those two.
//   - ErrKernelNotSupported, NotSupportedError: an agent tells "this
//     kernel is not in the corpus" from other failures (errors.Is), and
//     reads which kernel and why (errors.As).
//   - ErrCorrupt: an agent tells a damaged payload from an unsupported
//     kernel.
//   - Selection.Check, ErrOtherObjects: a collection the payload was not
//     generated for (its object rebuilt with other CO-RE relocations, go
//     generate not run) is refused, by Prune and LoadAndAssign, or by
//     Check for an agent that loads with cilium/ebpf itself; the error
//     says to run go generate.
//   - SelectOptions.AllowFamily, SourceFamily, FamilySelection: a build
//     of a kernel family the payload records as stable for its objects,
//     newer than the payload, served with a member's BTF when the agent
//     asks for it, and the Selection saying which and why
//     (Selection.Family).
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

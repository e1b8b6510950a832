package predict

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// Kernel is what the predictions need to know of a kernel beyond the BTF
// its CO-RE relocations resolve against, all read from its full BTF
// (vmlinux and modules) by NewKernel: which helpers, map, program and
// attach types its UAPI enums list, which of the kfuncs the objects call
// it has, whether it was built with its own BTF, the size of its long,
// its JIT, and which features of BPF and its verifier it has. It is small and has only exported plain
// fields, so a cache can store it instead of the BTF.
type Kernel struct {
	// FuncIDs, MapTypes, ProgTypes and AttachTypes are the values of
	// the kernel's enum bpf_func_id, bpf_map_type, bpf_prog_type and
	// bpf_attach_type, sorted, without the __MAX sentinels; nil if its
	// BTF has no such enum (then the prediction cannot tell).
	FuncIDs, MapTypes, ProgTypes, AttachTypes []uint32
	// Kfuncs are the names, of those NewKernel was asked about, that
	// are kfuncs of the kernel, sorted: a FUNC of its BTF, tagged
	// bpf_kfunc where the BTF tags kfuncs (TaggedKfuncs).
	Kfuncs []string
	// TaggedKfuncs says the kernel's BTF marks its kfuncs with a
	// DECL_TAG "bpf_kfunc" (pahole 1.26 and later, from the kernel's
	// kfunc sets; Linux 6.18 here has 203), so a FUNC without the tag is
	// no kfunc. Without tags (Debian 12's kernels), any FUNC counts.
	TaggedKfuncs bool
	// Asked are the kfunc names NewKernel was asked about, sorted: a
	// kfunc outside them is not known either way.
	Asked []string
	// OwnBTF says the kernel was built with its own BTF
	// (CONFIG_DEBUG_INFO_BTF): its BTF has the FUNC btf_vmlinux_init, of
	// kernel/bpf/sysfs_btf.c, which only that option builds (it exposes
	// /sys/kernel/btf/vmlinux). BTF made from the DWARF of a kernel built
	// without the option does not have it.
	OwnBTF bool
	// LongSize is sizeof(long) in bytes, from the BTF's "long int": 4 on
	// 32-bit kernels; 0 if the BTF does not say.
	LongSize uint32
	// Arch is the kernel's architecture as BTFHub names it (x86_64,
	// i386, arm64, arm), from its struct pt_regs; "" if unknown. With
	// Interpreter, it decides bpf-to-bpf calls and callbacks (jit.go).
	Arch string
	// Interpreter says the kernel has BPF's interpreter (built without
	// CONFIG_BPF_JIT_ALWAYS_ON): its BTF has the FUNC bpf_patch_call_args.
	Interpreter bool
	// Features says which BPF features (features.go) the markers of its
	// BTF show it has (true) or lacks (false), where its BTF has the
	// marker's type: what the kernel's release would tell of an upstream
	// kernel, and does not of a vendor's.
	Features map[Feature]bool

	// spelled is the fields above as a Memo keys them (spell), written
	// once by NewKernel: spelling them per object and kernel was 1 % of
	// a generate run.
	spelled string
}

// spell spells k's facts for a Memo's key.
func (k *Kernel) spell() string {
	if k.spelled != "" {
		return k.spelled
	}
	return fmt.Sprintf("%+v", *k)
}

// NewKernel reads a kernel's facts from its full BTF as cilium/ebpf
// loads it: vmlinux first, then module BTFs (which kfuncs may live in).
// kfuncs are the kfunc names the objects call (Kfuncs).
func NewKernel(targets []*btf.Spec, kfuncs []string) *Kernel {
	k := &Kernel{Asked: sortedSet(kfuncs)}
	if len(targets) == 0 {
		return k
	}
	vmlinux := targets[0]
	k.FuncIDs = enumValues(vmlinux, "bpf_func_id")
	k.MapTypes = enumValues(vmlinux, "bpf_map_type")
	k.ProgTypes = enumValues(vmlinux, "bpf_prog_type")
	k.AttachTypes = enumValues(vmlinux, "bpf_attach_type")
	k.OwnBTF = hasFunc(vmlinux, "btf_vmlinux_init")
	var long *btf.Int
	if err := vmlinux.TypeByName("long int", &long); err == nil {
		k.LongSize = long.Size
	}
	k.Arch, k.Interpreter = jitArch(vmlinux, k.LongSize), hasInterpreter(vmlinux)
	k.Features = readFeatures(vmlinux)
	tagged := kfuncTags(targets, k.Asked)
	k.TaggedKfuncs = len(tagged) > 0
	for _, name := range k.Asked {
		if k.TaggedKfuncs && !tagged[name] {
			continue
		}
		if slices.ContainsFunc(targets, func(s *btf.Spec) bool { return hasFunc(s, name) }) {
			k.Kfuncs = append(k.Kfuncs, name)
		}
	}
	k.spelled = k.spell()
	return k
}

// kfuncTags are the names of the FUNCs the BTF tags "bpf_kfunc", of
// names and tagReferences; empty if the BTF tags no kfunc. A BTF that
// tags kfuncs tags every one (pahole reads the kernel's kfunc sets), so
// looking at the kfuncs every kernel with kfunc tags has, those of the
// common set since Linux 6.2 (kernel/bpf/helpers.c), tells whether it
// tags them, without a pass over every type.
func kfuncTags(targets []*btf.Spec, names []string) map[string]bool {
	tagged := map[string]bool{}
	for _, name := range append(slices.Clone(tagReferences), names...) {
		for _, s := range targets {
			var fn *btf.Func
			if s.TypeByName(name, &fn) == nil && slices.Contains(fn.Tags, "bpf_kfunc") {
				tagged[name] = true
			}
		}
	}
	if !slices.ContainsFunc(tagReferences, func(n string) bool { return tagged[n] }) {
		return nil
	}
	return tagged
}

// tagReferences are kfuncs of the common kfunc set of every kernel since
// 6.2, long before pahole tagged kfuncs (1.26).
var tagReferences = []string{"bpf_rcu_read_lock", "bpf_rcu_read_unlock", "bpf_cast_to_kern_ctx", "bpf_rdonly_cast"}

// enumValues are the values of the enum called name, without the
// sentinels the kernel names __MAX_BPF_PROG_TYPE, __BPF_FUNC_MAX_ID...,
// sorted; nil if there is no such enum.
func enumValues(spec *btf.Spec, name string) []uint32 {
	var e *btf.Enum
	if err := spec.TypeByName(name, &e); err != nil {
		return nil
	}
	out := []uint32{}
	for _, v := range e.Values {
		if !strings.HasPrefix(v.Name, "__") {
			out = append(out, uint32(v.Value))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hasFunc says whether spec has a FUNC called name.
func hasFunc(spec *btf.Spec, name string) bool {
	var fn *btf.Func
	err := spec.TypeByName(name, &fn)
	return err == nil || errors.Is(err, btf.ErrMultipleMatches)
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// has says whether the sorted values hold v.
func has(values []uint32, v uint32) bool {
	_, ok := slices.BinarySearch(values, v)
	return ok
}

// is32Bit says the kernel's long is 4 bytes.
func (k *Kernel) is32Bit() bool { return k.LongSize == 4 }

// Kfuncs are the names of the kfuncs the programs of coll call, sorted:
// what NewKernel is asked about.
func Kfuncs(coll *ebpf.CollectionSpec) []string {
	var out []string
	for _, prog := range coll.Programs {
		for i := range prog.Instructions {
			if ins := &prog.Instructions[i]; ins.IsKfuncCall() {
				out = append(out, ins.Reference())
			}
		}
	}
	return sortedSet(out)
}

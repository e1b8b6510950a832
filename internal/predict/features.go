package predict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Feature is a change to BPF that the prediction would otherwise ask the
// kernel's release about. Vendors backport BPF under old release numbers
// (RHEL 8's 4.18.0-*.el8, Kylin's 4.19.90-*, Amazon Linux 2's 4.14, and
// Android GKI's "a12-5.10-..." does not parse at all), so each is read from
// a marker in the kernel's own types: a member, enum value or type that
// came with the feature, in the same commit or patch series
// (docs/predictions.md lists them with their commits).
type Feature string

const (
	// FeatureCalls: bpf-to-bpf calls (BPF_PSEUDO_CALL), Linux 4.16.
	FeatureCalls Feature = "bpf_calls"
	// FeatureBranchImm: the verifier decides every comparison of a
	// known scalar against an immediate, not only == and != (5.0).
	FeatureBranchImm Feature = "branch_imm"
	// FeatureGlobalData: direct access to map values
	// (BPF_PSEUDO_MAP_VALUE), which global data needs (5.2).
	FeatureGlobalData Feature = "global_data"
	// FeatureReadOnlyMaps: the map flags BPF_F_RDONLY_PROG and
	// BPF_F_WRONLY_PROG, which cilium/ebpf sets on .rodata (5.2).
	FeatureReadOnlyMaps Feature = "rdonly_prog"
	// FeatureGlobalFuncs: global functions verified on their own (5.6).
	FeatureGlobalFuncs Feature = "global_funcs"
	// FeatureBranchReg: the verifier decides comparisons against a
	// register holding a constant, and a pointer it knows is not null
	// against 0 (5.7).
	FeatureBranchReg Feature = "branch_reg"
	// FeatureNarrowFill: a fill narrower than 8 bytes gives back the
	// constant spilled there (5.17).
	FeatureNarrowFill Feature = "narrow_fill"
	// FeatureLazyGlobals: global functions verified only where a call
	// to them is reached (6.8).
	FeatureLazyGlobals Feature = "lazy_globals"

	// FeatureRingbuf and FeatureLoop are not asked about by the
	// prediction: they are markers of their releases for the features
	// before them that no type marks (branch_reg before ring buffers,
	// narrow_fill before bpf_loop), which a kernel that has them has
	// too, vendors backporting in upstream's order.

	// FeatureRingbuf: BPF ring buffers (5.8).
	FeatureRingbuf Feature = "ringbuf"
	// FeatureLoop: the helper bpf_loop (5.17).
	FeatureLoop Feature = "bpf_loop"
)

// marker is the type, member or enum value that shows a feature.
type marker struct {
	feature Feature
	// version is the upstream release that brought the feature, as
	// version gives it (5.2: 5002): what the release rules of a kernel
	// whose types do not decide compare with.
	version int
	// typ names a struct or enum of vmlinux, kind first ("struct
	// bpf_prog_aux", "enum bpf_cmd"); name a member or an enum value of
	// it. A kernel whose BTF has typ decides the feature by name; one
	// without typ does not.
	typ, name string
	// source cites the commit that added the feature and the marker.
	source string
}

// markers are the features' markers, oldest feature first: the order the
// kernel gained them upstream, which implied reads.
var markers = []marker{
	{FeatureCalls, 4016, "struct bpf_prog_aux", "func_cnt",
		"commit 1c2a088a6626, \"bpf: x64: add JIT support for multi-function programs\", of the series of cc8b0b92a169, \"bpf: introduce function calls\""},
	{FeatureBranchImm, 5000, "", "", "commit 4f7b3e82589e, \"bpf: improve verifier branch analysis\": no type marks it"},
	{FeatureGlobalData, 5002, "struct bpf_map_ops", "map_direct_value_addr",
		"commit d8eca5bbb2be, \"bpf: implement lookup-free direct value access for maps\""},
	{FeatureReadOnlyMaps, 5002, "enum bpf_cmd", "BPF_MAP_FREEZE",
		"commit 87df15de441b, \"bpf: add syscall side map freeze support\", of the series of 591fe9888d78, \"bpf: add program side {rd, wr}only support for maps\""},
	{FeatureGlobalFuncs, 5006, "struct bpf_prog_aux", "func_info_aux",
		"commit 51c39bb1d5d1, \"bpf: Introduce function-by-function verification\""},
	{FeatureBranchReg, 5007, "", "", "no type marks it"},
	{FeatureRingbuf, 5008, "enum bpf_func_id", "BPF_FUNC_ringbuf_output",
		"commit 457f44363a88, \"bpf: Implement BPF ring buffer and verifier support for it\""},
	{FeatureNarrowFill, 5017, "", "", "commit 354e8f1970f8, \"bpf: Support <8-byte scalar spill and refill\": no type marks it"},
	{FeatureLoop, 5017, "enum bpf_func_id", "BPF_FUNC_loop",
		"commit e6f2dd0f8067, \"bpf: Add bpf_loop helper\""},
	{FeatureLazyGlobals, 6008, "struct bpf_func_info_aux", "called",
		"commit 2afae08c9dcb, \"bpf: Validate global subprogs lazily\""},
}

// readFeatures reads which features vmlinux's markers show it has, and
// which it lacks; a feature whose marker's type vmlinux lacks, or that has
// no marker, is left out (feature implies it from the others).
func readFeatures(vmlinux *btf.Spec) map[Feature]bool {
	out := map[Feature]bool{}
	for _, m := range markers {
		if has, ok := hasMarker(vmlinux, m); ok {
			out[m.feature] = has
		}
	}
	return out
}

// hasMarker says whether vmlinux has m's member or enum value; ok is
// false where its BTF lacks m's type, or m has none.
func hasMarker(vmlinux *btf.Spec, m marker) (has, ok bool) {
	if m.typ == "" {
		return false, false
	}
	kind, name, _ := strings.Cut(m.typ, " ")
	types, err := vmlinux.AnyTypesByName(name)
	if err != nil {
		return false, false
	}
	for _, t := range types {
		switch t := t.(type) {
		case *btf.Struct:
			if kind == "struct" {
				return slices.ContainsFunc(t.Members, func(mb btf.Member) bool { return mb.Name == m.name }), true
			}
		case *btf.Enum:
			if kind == "enum" {
				return slices.ContainsFunc(t.Values, func(v btf.EnumValue) bool { return v.Name == m.name }), true
			}
		}
	}
	return false, false
}

// featureFact is what a kernel is known to have of a feature, and what
// tells.
type featureFact struct {
	f          Feature
	has, known bool
	// by is the marker that decided: the feature's own, or a later
	// feature's the kernel has, or an earlier one's it lacks (vendors
	// backport BPF in upstream's order); nil where the release decided.
	by *marker
}

// feature tells whether the kernel of k (nil: its types are not known)
// and release has f: from its types where they decide, else from its
// release, where it parses.
func feature(k *Kernel, release string, f Feature) featureFact {
	i := slices.IndexFunc(markers, func(m marker) bool { return m.feature == f })
	out := featureFact{f: f, known: true}
	if k != nil {
		if has, ok := k.Features[f]; ok {
			out.has, out.by = has, &markers[i]
			return out
		}
		for j := len(markers) - 1; j > i; j-- {
			if k.Features[markers[j].feature] {
				out.has, out.by = true, &markers[j]
				return out
			}
		}
		for j := range i {
			if has, ok := k.Features[markers[j].feature]; ok && !has {
				out.by = &markers[j]
				return out
			}
		}
	}
	v, ok := version(release)
	out.has, out.known = ok && v >= markers[i].version, ok
	return out
}

// String says, for a reason, what the kernel has of the feature and what
// told: a marker, or the release's version (not the release itself: a
// Memo shares reasons among releases of one version).
func (ff featureFact) String() string {
	i := slices.IndexFunc(markers, func(m marker) bool { return m.feature == ff.f })
	feat := fmt.Sprintf("%s (Linux %d.%d)", ff.f, markers[i].version/1000, markers[i].version%1000)
	m := ff.by
	switch {
	case m == nil && !ff.known:
		return feat + ": the kernel's types do not show it either way, and its release does not parse"
	case m == nil && ff.has:
		return feat + ": the kernel's types do not show it either way, and the version of its release has it"
	case m == nil:
		return feat + ": the kernel's types do not show it either way, and the version of its release predates it"
	case ff.has:
		return fmt.Sprintf("%s: the kernel's BTF has %s (%s)", feat, m.spell(), m.source)
	}
	return fmt.Sprintf("%s: the kernel's BTF has %s but no %s (%s)", feat, m.typ, m.spell(), m.source)
}

// spell names m's marker: "bpf_map_ops.map_direct_value_addr",
// "BPF_MAP_FREEZE of enum bpf_cmd".
func (m marker) spell() string {
	if name, ok := strings.CutPrefix(m.typ, "struct "); ok {
		return name + "." + m.name
	}
	return m.name + " of " + m.typ
}

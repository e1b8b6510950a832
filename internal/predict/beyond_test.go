package predict

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/dwarfkernel"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vocab"
)

// expect is a program's verdict on a kernel and the kind of its first
// reason.
type expect struct {
	verdict vocab.Verdict
	kind    vocab.Kind
}

var loads = expect{vocab.Loads, ""}

// featureExpectations are the verdicts testdata/objects/features/README.md
// gives, for the kernels of the tests: Debian 11's 5.10 (no bpf_loop,
// bpf_strncmp, bloom filters...), Debian 12's 6.1 (no kfunc
// bpf_rcu_read_lock, no cgroup storage) and 6.12, and 6.1.176 built
// without BTF.
var featureExpectations = map[string]map[string]expect{
	"5.10": {
		"loop": {vocab.Fails, vocab.KindHelper}, "for_each": {vocab.Fails, vocab.KindHelper},
		"uses_strncmp": {vocab.Fails, vocab.KindHelper}, "uses_snprintf": {vocab.Fails, vocab.KindHelper},
		"bloom": {vocab.Fails, vocab.KindMapType}, "task_btf": {vocab.Fails, vocab.KindHelper},
		"rcu_kfunc": {vocab.Fails, vocab.KindKfunc}, "cgrp_storage": {vocab.Fails, vocab.KindMapType},
		"accept_all": {vocab.Fails, vocab.KindProgType}, "connect_unix": {vocab.Fails, vocab.KindAttachType},
	},
	"6.1": {
		"rcu_kfunc": {vocab.Fails, vocab.KindKfunc}, "cgrp_storage": {vocab.Fails, vocab.KindMapType},
		"accept_all": {vocab.Fails, vocab.KindProgType}, "connect_unix": {vocab.Fails, vocab.KindAttachType},
	},
	"6.12": {},
	"nobtf": {
		"fentry_nanosleep": {vocab.Fails, vocab.KindBTFIDAttach}, "tp_btf_exec": {vocab.Fails, vocab.KindBTFIDAttach},
		// Its program type is refused before its map type is looked at.
		"rcu_kfunc": {vocab.Fails, vocab.KindBTFIDAttach}, "cgrp_storage": {vocab.Fails, vocab.KindBTFIDAttach},
		"task_btf": {vocab.Fails, vocab.KindHelper}, "rcu_kfunc_weak": {vocab.Fails, vocab.KindBTFIDAttach},
		"accept_all": {vocab.Fails, vocab.KindProgType}, "connect_unix": {vocab.Fails, vocab.KindAttachType},
	},
}

// predictFeatures predicts the feature objects on a kernel, with its
// facts, by program name.
func predictFeatures(t *testing.T, k kerneltest.Kernel) map[string]Prediction {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "features", "*-el.o"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no feature objects: %v", err)
	}
	spec := kernelSpec(t, k)
	targets := []*btf.Spec{spec}
	out := map[string]Prediction{}
	for _, path := range paths {
		coll, relos := object(t, path)
		opts := &Options{Release: k.Release, Kernel: NewKernel(targets, Kfuncs(coll))}
		for _, p := range Collection(filepath.Base(path), coll, relos, k.Name, targets, opts) {
			out[p.Program] = p
		}
	}
	return out
}

// noBTF is the shared corpus's kernel built without BTF, with BTF that
// pahole makes from its DWARF.
func noBTF(tb testing.TB) kerneltest.Kernel {
	tb.Helper()
	return dwarfkernel.Kernel(tb, kerneltest.SharedFile(tb, dwarfkernel.NoBTFVMLinux), dwarfkernel.NoBTFKey)
}

// checkExpectations compares predictions, by program, with what is
// expected of them: loads where want does not name the program.
func checkExpectations(t *testing.T, preds map[string]Prediction, want map[string]expect) {
	t.Helper()
	for prog, p := range preds {
		w, ok := want[prog]
		if !ok {
			w = loads
		}
		got := expect{p.Verdict, ""}
		if len(p.Reasons) > 0 {
			got.kind = p.Reasons[0].Kind
		}
		if got != w {
			t.Errorf("%s: %s %q, want %s (%s)", p, p.Verdict, p.Reasons, w.verdict, w.kind)
		}
	}
}

// TestFeatures predicts the feature objects, which use what older
// kernels lack, on real kernels: each program loads or fails as its
// README says, for the reason of the kind it says.
func TestFeatures(t *testing.T) {
	kernels := map[string]func(*testing.T) kerneltest.Kernel{
		"5.10": func(t *testing.T) kerneltest.Kernel {
			return kerneltest.SharedArchive(t, "debian/11/x86_64/5.10.0-32-amd64")
		},
		"6.1":   func(t *testing.T) kerneltest.Kernel { return kerneltest.ByName(t, "6.1.0-47-amd64") },
		"6.12":  func(t *testing.T) kerneltest.Kernel { return kerneltest.ByName(t, "6.12.118+deb12-amd64") },
		"nobtf": func(t *testing.T) kerneltest.Kernel { return noBTF(t) },
		// The same 6.1 without BTF under a vendor's release, 4.18: its
		// types decide, as the nobtf kernel's do.
		"vendor": func(t *testing.T) kerneltest.Kernel { return kerneltest.Vendor(t) },
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range kernels {
			if !yield(n) {
				return
			}
		}
	}) {
		t.Run(name, func(t *testing.T) {
			k := kernels[name](t)
			preds := predictFeatures(t, k)
			if len(preds) != 18 {
				t.Errorf("%d programs, want 18", len(preds))
			}
			want := featureExpectations[name]
			if name == "vendor" {
				want = featureExpectations["nobtf"]
			}
			checkExpectations(t, preds, want)
		})
	}
}

// TestFeatureReasons checks what the reasons say: the helper by name and
// number, the map, the kfunc, and a guarded call listed as guarded.
func TestFeatureReasons(t *testing.T) {
	k := kerneltest.SharedArchive(t, "debian/11/x86_64/5.10.0-32-amd64")
	preds := predictFeatures(t, k)
	for _, tt := range []struct {
		program, reason, guarded string
	}{
		{"loop", "helper bpf_loop (181) is not in this kernel: call at insn", ""},
		{"loop", "callback add_index at insn", ""},
		{"for_each", "helper bpf_for_each_map_elem (164) is not in this kernel", ""},
		{"uses_strncmp", "reachable: helper bpf_strncmp (182) is not in this kernel: call at insn 10", ""},
		{"bloom", "map seen: map type BloomFilter (30) is not in this kernel", ""},
		{"task_btf", "helper bpf_get_current_task_btf (158) is not in this kernel", ""},
		{"rcu_kfunc", "kfunc bpf_rcu_read_lock is not in this kernel's BTF", ""},
		// The walk stops at the first call the kernel lacks.
		{"cgrp_storage", "helper bpf_get_current_task_btf (158) is not in this kernel", ""},
		{"guarded_strncmp", "", "helper bpf_strncmp (182) is not in this kernel: call at insn 12"},
		{"rcu_kfunc_weak", "", "kfunc bpf_rcu_read_lock is not in this kernel's BTF: call at insn"},
		{"accept_all", "program type Netfilter (32) is not in this kernel", ""},
		{"accept_all", "attach type Netfilter (45) is not in this kernel", ""},
		{"connect_unix", "attach type CgroupUnixConnect", ""},
	} {
		p := preds[tt.program]
		if tt.reason != "" && !strings.Contains(strings.Join(texts(p.Reasons), "\n"), tt.reason) {
			t.Errorf("%s: reasons %q, want one containing %q", tt.program, p.Reasons, tt.reason)
		}
		if tt.guarded != "" && !strings.Contains(strings.Join(p.Guarded, "\n"), tt.guarded) {
			t.Errorf("%s: guarded %q, want one containing %q", tt.program, p.Guarded, tt.guarded)
		}
	}
	nobtf := predictFeatures(t, noBTF(t))
	if p := nobtf["task_btf"]; !strings.Contains(strings.Join(texts(p.Reasons), "\n"), "helper bpf_get_current_task_btf (158) returns a pointer typed by the kernel's own BTF") {
		t.Errorf("task_btf without BTF: %q", p.Reasons)
	}
}

// TestNewKernel reads the facts of real kernels: helpers and map types
// by their enums, kfuncs by their FUNCs, own BTF by btf_vmlinux_init.
func TestNewKernel(t *testing.T) {
	for _, tt := range []struct {
		name    string
		kernel  func(*testing.T) kerneltest.Kernel
		loop    bool // BPF_FUNC_loop (181)
		bloom   bool // BPF_MAP_TYPE_BLOOM_FILTER (30)
		rcu     bool // kfunc bpf_rcu_read_lock
		ownBTF  bool
		maxFunc uint32 // the last helper: bpf_redirect_peer on 5.10, bpf_user_ringbuf_drain on 6.1
	}{
		{"5.10", func(t *testing.T) kerneltest.Kernel {
			return kerneltest.SharedArchive(t, "debian/11/x86_64/5.10.0-32-amd64")
		}, false, false, false, true, 155},
		{"6.1", func(t *testing.T) kerneltest.Kernel { return kerneltest.ByName(t, "6.1.0-47-amd64") }, true, true, false, true, 209},
		{"6.12", func(t *testing.T) kerneltest.Kernel { return kerneltest.ByName(t, "6.12.118+deb12-amd64") }, true, true, true, true, 211},
		{"nobtf", func(t *testing.T) kerneltest.Kernel { return noBTF(t) }, true, true, false, false, 209},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.kernel(t)
			facts := NewKernel([]*btf.Spec{kernelSpec(t, k)}, []string{"bpf_rcu_read_lock", "bpf_rcu_read_lock"})
			got := [4]bool{has(facts.FuncIDs, uint32(asm.FnLoop)), has(facts.MapTypes, 30), slices.Contains(facts.Kfuncs, "bpf_rcu_read_lock"), facts.OwnBTF}
			if want := [4]bool{tt.loop, tt.bloom, tt.rcu, tt.ownBTF}; got != want {
				t.Errorf("%s: loop, bloom, rcu, own BTF = %v, want %v", k.Name, got, want)
			}
			if n := facts.FuncIDs[len(facts.FuncIDs)-1]; n < tt.maxFunc || n > tt.maxFunc+20 {
				t.Errorf("%s: last helper %d, want %d or, on later kernels, a few more", k.Name, n, tt.maxFunc)
			}
			if facts.LongSize != 8 || len(facts.Asked) != 1 || facts.Arch != "x86_64" {
				t.Errorf("%s: long is %d bytes, asked %q, arch %q", k.Name, facts.LongSize, facts.Asked, facts.Arch)
			}
		})
	}
}

// TestHelperNames checks the helper names derived from cilium/ebpf's
// constants against the enum bpf_func_id of real kernels.
func TestHelperNames(t *testing.T) {
	for _, k := range kerneltest.Corpus(t) {
		var e *btf.Enum
		if err := kernelSpec(t, k).TypeByName("bpf_func_id", &e); err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		for _, v := range e.Values {
			name, ok := strings.CutPrefix(v.Name, "BPF_FUNC_")
			if !ok {
				continue
			}
			if got := helperName(uint32(v.Value)); got != "bpf_"+name {
				t.Errorf("%s: helper %d is %s, named %s", k.Name, v.Value, v.Name, got)
			}
		}
	}
}

// TestFeatures32Bit predicts the feature objects on Debian's 686-pae
// (i386, built without BTF): ctx_long.c's 8-byte load of `unsigned long
// args[0]`, which cilium/ebpf's fixup moves to offset 12, fails there
// (the verifier says "invalid bpf_context access off=12 size=8"); the
// programs that need the kernel's own BTF fail for it.
func TestFeatures32Bit(t *testing.T) {
	deb := kerneltest.Debian686PAE(t)
	k := dwarfkernel.Kernel(t, deb.Dbg, kernelkey.Key{Distro: "debian", Version: "12", Arch: "i386", Release: deb.Release})
	facts := NewKernel([]*btf.Spec{kernelSpec(t, k)}, nil)
	if facts.LongSize != 4 || facts.OwnBTF || facts.Arch != "i386" || !facts.Interpreter {
		t.Fatalf("%s: long is %d bytes, own BTF %v, arch %q, interpreter %v; want 4, false, i386, true", k.Name, facts.LongSize, facts.OwnBTF, facts.Arch, facts.Interpreter)
	}
	preds := predictFeatures(t, k)
	want := maps.Clone(featureExpectations["nobtf"])
	want["sys_enter_arg"] = expect{vocab.Fails, vocab.KindCtxAccess}
	want["loop"], want["for_each"] = expect{vocab.Fails, vocab.KindJIT}, expect{vocab.Fails, vocab.KindJIT}
	checkExpectations(t, preds, want)
	if r := texts(preds["sys_enter_arg"].Reasons); len(r) == 0 || !strings.Contains(r[0], "invalid bpf_context access off=12 size=8") {
		t.Errorf("sys_enter_arg: reasons %q, want the verifier's off=12 size=8", r)
	}
}

// TestKfuncTags: where the kernel's BTF tags its kfuncs (6.18 here), a
// FUNC without the tag is no kfunc; Debian 12's BTF has no tags, and any
// FUNC counts there.
func TestKfuncTags(t *testing.T) {
	asked := []string{"bpf_rcu_read_lock", "schedule"}
	running := kerneltest.Running(t)
	facts := NewKernel([]*btf.Spec{kernelSpec(t, running)}, asked)
	if !facts.TaggedKfuncs {
		t.Skipf("%s: the running kernel's BTF does not tag kfuncs", running.Release)
	}
	if !slices.Equal(facts.Kfuncs, []string{"bpf_rcu_read_lock"}) {
		t.Errorf("%s: kfuncs %q, want bpf_rcu_read_lock only (schedule is a FUNC, no kfunc)", running.Release, facts.Kfuncs)
	}
	debian := NewKernel([]*btf.Spec{kernelSpec(t, kerneltest.ByName(t, "6.12.118+deb12-amd64"))}, asked)
	if debian.TaggedKfuncs || !slices.Equal(debian.Kfuncs, asked) {
		t.Errorf("6.12: tagged %v, kfuncs %q, want untagged, both", debian.TaggedKfuncs, debian.Kfuncs)
	}
}

// TestAttachTypeAtLoad checks that an expected attach type the kernel
// lacks fails only program types whose load checks it: a kprobe.multi
// program loads on a kernel without BPF_TRACE_KPROBE_MULTI (it fails at
// attach), a cgroup/connect4 program does not.
func TestAttachTypeAtLoad(t *testing.T) {
	k := &Kernel{
		ProgTypes:   []uint32{uint32(ebpf.Kprobe), uint32(ebpf.CGroupSockAddr)},
		AttachTypes: []uint32{0},
		OwnBTF:      true,
	}
	for _, tt := range []struct {
		prog  *ebpf.ProgramSpec
		fails bool
	}{
		{&ebpf.ProgramSpec{Type: ebpf.Kprobe, AttachType: ebpf.AttachTraceKprobeMulti}, false},
		{&ebpf.ProgramSpec{Type: ebpf.CGroupSockAddr, AttachType: ebpf.AttachCGroupInet4Connect}, true},
	} {
		var b beyond
		b.checkTypes(tt.prog, k)
		if got := b.hasFails(vocab.KindAttachType, "attach type"); got != tt.fails {
			t.Errorf("%s with attach type %s: attach_type fails %v, want %v (%q)", tt.prog.Type, tt.prog.AttachType, got, tt.fails, b.fails)
		}
	}
}

// withFeatures is k with the features its types show replaced: what the
// types of a kernel older than 6.1 show of them, or nothing.
func withFeatures(k *Kernel, features map[Feature]bool) *Kernel {
	out := *k
	out.Features, out.spelled = features, ""
	out.spelled = out.spell()
	return &out
}

// before52 is what the types of a kernel between 4.16 and 5.2 show (the
// 4.15 built here has bpf_prog_aux without func_cnt as well).
var before52 = map[Feature]bool{FeatureCalls: true, FeatureGlobalData: false, FeatureReadOnlyMaps: false, FeatureGlobalFuncs: false}

// TestGlobalDataFromTypes predicts internal/vmtest's rodata_bystander
// object, a program reading .rodata and one that does not, with 6.1's
// facts. Where the types show global data, both load whatever the
// release says (a vendor's 4.18 or 4.19, an Android name); where they
// lack its markers both fail for it (the bystander because cilium/ebpf
// creates its object's .rodata with a flag 4.15 refuses, as the field
// test's booted 4.15 showed), whatever the release says; where they show
// neither way, the release can only make them unknown.
func TestGlobalDataFromTypes(t *testing.T) {
	k := kerneltest.ByName(t, "6.1.0-47-amd64")
	targets := []*btf.Spec{kernelSpec(t, k)}
	facts := NewKernel(targets, nil)
	path := filepath.Join(kerneltest.Dir(), "..", "internal", "vmtest", "testdata", "rodata_bystander-el.o")
	coll, relos := object(t, path)
	const (
		reads = "global data at insn 0 needs global_data (Linux 5.2): the kernel's BTF has struct bpf_map_ops but no bpf_map_ops.map_direct_value_addr (commit d8eca5bbb2be"
		flag  = "the object's read-only global data .rodata needs rdonly_prog (Linux 5.2): the kernel's BTF has enum bpf_cmd but no BPF_MAP_FREEZE of enum bpf_cmd (commit 87df15de441b"
		noTyp = "needs rdonly_prog (Linux 5.2): the kernel's types do not show it either way, and the version of its release predates it"
	)
	for _, tt := range []struct {
		release string
		k       *Kernel
		verdict vocab.Verdict
		want    map[string]string // program -> the start of its first reason, "" none
	}{
		{"4.18.0-305.el8.x86_64", facts, vocab.Loads, nil},
		{"4.15.17", facts, vocab.Loads, nil},
		{"a12-5.10-2021-09-arm64", facts, vocab.Loads, nil},
		{"6.1.0-47-amd64", withFeatures(facts, before52), vocab.Fails, map[string]string{"reads_rodata": reads, "bystander": flag}},
		{"4.15.17", withFeatures(facts, before52), vocab.Fails, map[string]string{"reads_rodata": reads, "bystander": flag}},
		{"4.15.17", withFeatures(facts, map[Feature]bool{FeatureReadOnlyMaps: true, FeatureGlobalData: false}), vocab.Fails, map[string]string{"reads_rodata": reads}},
		{"4.15.17", withFeatures(facts, nil), vocab.Unknown, map[string]string{"reads_rodata": "global data at insn 0", "bystander": "the object's read-only global data .rodata " + noTyp}},
		{"5.2.0", withFeatures(facts, nil), vocab.Loads, nil},
	} {
		preds := Collection(filepath.Base(path), coll, relos, k.Name, targets, &Options{Release: tt.release, Kernel: tt.k})
		if len(preds) != 2 {
			t.Fatalf("%s: %d predictions, want 2", tt.release, len(preds))
		}
		for _, p := range preds {
			want, verdict := tt.want[p.Program], tt.verdict
			if want == "" {
				verdict = vocab.Loads
			}
			if p.Verdict != verdict || want != "" && (p.Reasons[0].Kind != vocab.KindGlobalData || !strings.HasPrefix(p.Reasons[0].Text, want)) {
				t.Errorf("%s on %s with %v: %s %q, want %s for global data: %q", p.Program, tt.release, tt.k.Features, p.Verdict, p.Reasons, verdict, want)
			}
		}
	}
}

// TestCallsFromTypes: where the types lack 4.16's bpf_prog_aux.func_cnt
// a program with a bpf-to-bpf call or a callback fails for it, first
// (cilium/ebpf refuses it before the kernel sees it: on the booted 4.15
// kernel, "bpf2bpf calls not supported"), whatever the release; where
// they have it, no program fails for it, whatever the release. Which
// programs have one is read from their instructions here.
func TestCallsFromTypes(t *testing.T) {
	k := kerneltest.ByName(t, "6.1.0-47-amd64")
	targets := []*btf.Spec{kernelSpec(t, k)}
	facts := NewKernel(targets, nil)
	without := withFeatures(facts, map[Feature]bool{FeatureCalls: false})
	for _, name := range []string{"guards-el.o", "features/loop-el.o"} {
		path := filepath.Join(kerneltest.Dir(), "objects", name)
		coll, relos := object(t, path)
		calls := 0
		for _, tt := range []struct {
			release string
			k       *Kernel
			fails   bool
		}{
			{"4.15.17", facts, false},
			{"a12-5.10-2021-09-arm64", facts, false},
			{"6.1.0-47-amd64", without, true},
			{"4.16.0", without, true},
		} {
			for _, p := range Collection(name, coll, relos, k.Name, targets, &Options{Release: tt.release, Kernel: tt.k}) {
				has := slices.ContainsFunc(coll.Programs[p.Program].Instructions, func(ins asm.Instruction) bool {
					return ins.IsFunctionCall() || ins.IsLoadOfFunctionPointer()
				})
				got := slices.ContainsFunc(p.Reasons, func(r Reason) bool { return r.Kind == vocab.KindCall })
				switch {
				case !tt.fails && got:
					t.Errorf("%s %s on %s: %q", name, p.Program, tt.release, p.Reasons)
				case tt.fails && got != has:
					t.Errorf("%s %s on %s: calls %v, reasons %q", name, p.Program, tt.release, has, p.Reasons)
				case tt.fails && has && (p.Verdict != vocab.Fails || p.Reasons[0].Kind != vocab.KindCall ||
					!strings.Contains(p.Reasons[0].Text, "the kernel's BTF has struct bpf_prog_aux but no bpf_prog_aux.func_cnt")):
					t.Errorf("%s %s on %s: %s %q, want fails for its call first, by bpf_prog_aux", name, p.Program, tt.release, p.Verdict, p.Reasons)
				}
				if has {
					calls++
				}
			}
		}
		if calls == 0 {
			t.Errorf("%s: no program with a call; the test checks nothing", name)
		}
	}
}

package predict

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/vocab"
)

// poisonCall is the instruction cilium/ebpf writes in place of one it
// cannot relocate.
func poisonCall() asm.Instruction {
	return asm.BuiltinFunc(btf.COREBadRelocationSentinel).Call()
}

// jmp sets a jump's offset, in raw instructions, as the ELF reader does.
func jmp(ins asm.Instruction, off int16) asm.Instruction {
	ins.Offset = off
	return ins
}

// storeImm64 is `*(u64 *)(r10 + off) = v`, which asm.StoreImm does not
// build.
func storeImm64(off int16, v int64) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: asm.RFP, Offset: off, Constant: v}
}

// TestWalk runs the walk on hand-written programs, each with one
// poisoned instruction, for the patterns compiled code uses to guard it
// and for the ones where the walk must say it does not know.
func TestWalk(t *testing.T) {
	exit := []asm.Instruction{asm.Mov.Imm(asm.R0, 0), asm.Return()}
	prog := func(insns ...asm.Instruction) asm.Instructions {
		return append(asm.Instructions(insns), exit...)
	}
	for _, tt := range []struct {
		name  string
		insns asm.Instructions
		want  vocab.Verdict
		why   string // in the reasons, for Unknown
	}{
		{"unguarded", prog(poisonCall()), vocab.Fails, ""},
		{"constant guard", prog(
			asm.Mov.Imm(asm.R1, 0),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"guard on a value read from memory", prog(
			asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Fails, ""},
		{"32-bit jump sees the low half", prog(
			asm.LoadImm(asm.R1, 1<<32, asm.DWord),
			jmp(asm.JEq.Imm32(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"64-bit jump sees the high half", prog(
			asm.LoadImm(asm.R1, 1<<32, asm.DWord),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Fails, ""},
		{"jset", prog(
			asm.Mov.Imm(asm.R1, 2),
			jmp(asm.JSet.Imm(asm.R1, 1, ""), 1),
			jmp(asm.Ja.Label(""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"arithmetic", prog(
			asm.Mov.Imm(asm.R1, 1),
			asm.Mov.Imm(asm.R2, 1),
			asm.Add.Reg(asm.R2, asm.R1),
			asm.LSh.Imm(asm.R2, 32),
			asm.RSh.Imm(asm.R2, 32),
			jmp(asm.JNE.Imm(asm.R2, 2, ""), 1),
			jmp(asm.Ja.Label(""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"spill and fill", prog(
			asm.Mov.Imm(asm.R1, 0),
			asm.StoreMem(asm.RFP, -4, asm.R1, asm.Word),
			asm.Mov.Imm(asm.R1, 1),
			asm.LoadMem(asm.R1, asm.RFP, -4, asm.Word),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"fill of another size", prog(
			asm.Mov.Imm(asm.R1, 0),
			asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
			asm.LoadMem(asm.R1, asm.RFP, -8, asm.Word),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Unknown, "may know"},
		{"helper overwrites the spill", prog(
			storeImm64(-8, 0),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, -8),
			asm.Mov.Imm(asm.R2, 8),
			asm.FnProbeReadKernel.Call(),
			asm.LoadMem(asm.R1, asm.RFP, -8, asm.DWord),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Fails, ""},
		{"helper that only reads keeps the spill", prog(
			storeImm64(-16, 0),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -8),
			asm.LoadMapPtr(asm.R1, 0),
			asm.FnMapLookupElem.Call(),
			asm.LoadMem(asm.R1, asm.RFP, -16, asm.DWord),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"helper writing an unknown size", prog(
			storeImm64(-8, 0),
			asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, -16),
			asm.FnProbeReadKernel.Call(),
			asm.LoadMem(asm.R1, asm.RFP, -8, asm.DWord),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Unknown, "may know"},
		{"stack pointer is not null", prog(
			asm.Mov.Reg(asm.R1, asm.RFP),
			jmp(asm.JNE.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"equality teaches the value", prog(
			asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
			jmp(asm.JNE.Imm(asm.R1, 5, ""), 2),
			jmp(asm.JEq.Imm(asm.R1, 5, ""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"bounded loop", prog(
			asm.Mov.Imm(asm.R1, 0),
			asm.Add.Imm(asm.R1, 1),
			jmp(asm.JLT.Imm(asm.R1, 4, ""), -2),
			jmp(asm.JEq.Imm(asm.R1, 4, ""), 1),
			poisonCall(),
		), vocab.Loads, ""},
		{"division is not followed", prog(
			asm.Mov.Imm(asm.R1, 4),
			asm.Div.Imm(asm.R1, 4),
			jmp(asm.JEq.Imm(asm.R1, 1, ""), 1),
			poisonCall(),
		), vocab.Unknown, "division"},
		{"rodata", prog(
			asm.LoadMapValue(asm.R1, 0, 0).WithReference(".rodata"),
			asm.LoadMem(asm.R1, asm.R1, 0, asm.Word),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
			poisonCall(),
		), vocab.Unknown, ".rodata"},
		{"endless loop", prog(
			jmp(asm.Ja.Label(""), -1),
			poisonCall(),
		), vocab.Unknown, "gave up"},
		{"loop that counts too far", prog(
			asm.Mov.Imm(asm.R1, 0),
			asm.Add.Imm(asm.R1, 1),
			jmp(asm.JNE.Imm(asm.R1, 0, ""), -2),
			poisonCall(),
		), vocab.Unknown, "gave up"},
		{"poisoned 64-bit load", prog(
			asm.Mov.Imm(asm.R1, 0),
			jmp(asm.JEq.Imm(asm.R1, 0, ""), 2),
			asm.LoadImm(asm.R10, btf.COREBadRelocationSentinel, asm.DWord),
		), vocab.Loads, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			poison := map[int]point{}
			for i := range tt.insns {
				if isPoison(&tt.insns[i]) {
					poison[i] = point{kind: vocab.KindCORE, what: "test relocation"}
				}
			}
			if len(poison) != 1 {
				t.Fatalf("%d poisoned instructions, want 1", len(poison))
			}
			v, reasons, _, _ := judge(tt.insns, tt.insns, poison, latest)
			if v != tt.want {
				t.Fatalf("%s %q, want %s", v, reasons, tt.want)
			}
			if tt.why != "" && !strings.Contains(strings.Join(texts(reasons), "\n"), tt.why) {
				t.Errorf("reasons %q, want one mentioning %q", reasons, tt.why)
			}
		})
	}
}

// TestWalkCalls covers bpf-to-bpf calls: a static function's return
// value is followed, a global function is checked on its own.
func TestWalkCalls(t *testing.T) {
	fn := func(name string, linkage btf.FuncLinkage, body ...asm.Instruction) []asm.Instruction {
		body[0] = btf.WithFuncMetadata(body[0].WithSymbol(name), &btf.Func{Name: name, Linkage: linkage, Type: &btf.FuncProto{}})
		return body
	}
	main := func(callee string) []asm.Instruction {
		return fn("main", btf.GlobalFunc,
			asm.Call.Label(callee),
			jmp(asm.JEq.Imm(asm.R0, 0, ""), 1),
			poisonCall(),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		)
	}
	for _, tt := range []struct {
		name    string
		insns   asm.Instructions
		globals globals
		want    vocab.Verdict
	}{
		{"static returns 0", append(main("f"), fn("f", btf.StaticFunc, asm.Mov.Imm(asm.R0, 0), asm.Return())...), globalsLazy, vocab.Loads},
		{"static returns 1", append(main("f"), fn("f", btf.StaticFunc, asm.Mov.Imm(asm.R0, 1), asm.Return())...), globalsLazy, vocab.Fails},
		{"global returns unknown", append(main("f"), fn("f", btf.GlobalFunc, asm.Mov.Imm(asm.R0, 0), asm.Return())...), globalsLazy, vocab.Fails},
		{"poison in a global function called on a dead path, lazily", append(
			fn("main", btf.GlobalFunc,
				asm.Mov.Imm(asm.R1, 0),
				jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
				asm.Call.Label("g"),
				asm.Mov.Imm(asm.R0, 0),
				asm.Return()),
			fn("g", btf.GlobalFunc, poisonCall(), asm.Return())...), globalsLazy, vocab.Loads},
		{"the same, eagerly", append(
			fn("main", btf.GlobalFunc,
				asm.Mov.Imm(asm.R1, 0),
				jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
				asm.Call.Label("g"),
				asm.Mov.Imm(asm.R0, 0),
				asm.Return()),
			fn("g", btf.GlobalFunc, poisonCall(), asm.Return())...), globalsEager, vocab.Fails},
		{"the same, kernel version unknown", append(
			fn("main", btf.GlobalFunc,
				asm.Mov.Imm(asm.R1, 0),
				jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
				asm.Call.Label("g"),
				asm.Mov.Imm(asm.R0, 0),
				asm.Return()),
			fn("g", btf.GlobalFunc, poisonCall(), asm.Return())...), globalsUnsure, vocab.Unknown},
		{"pointer to a returned frame left in the caller's stack", append(
			fn("main", btf.GlobalFunc,
				asm.Mov.Reg(asm.R1, asm.RFP),
				asm.Add.Imm(asm.R1, -8),
				asm.Call.Label("f"),
				asm.LoadMem(asm.R1, asm.RFP, -8, asm.DWord),
				asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
				jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
				poisonCall(),
				asm.Mov.Imm(asm.R0, 0),
				asm.Return()),
			fn("f", btf.StaticFunc,
				asm.Mov.Reg(asm.R2, asm.RFP),
				asm.Add.Imm(asm.R2, -8),
				asm.StoreMem(asm.R1, 0, asm.R2, asm.DWord),
				asm.Return())...), globalsLazy, vocab.Fails},
		{"argument passed to a static function", append(
			fn("main", btf.GlobalFunc,
				asm.Mov.Imm(asm.R1, 0),
				asm.Call.Label("f"),
				asm.Mov.Imm(asm.R0, 0),
				asm.Return()),
			fn("f", btf.StaticFunc,
				jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
				poisonCall(),
				asm.Return())...), globalsLazy, vocab.Loads},
	} {
		t.Run(tt.name, func(t *testing.T) {
			poison := map[int]point{}
			for i := range tt.insns {
				if isPoison(&tt.insns[i]) {
					poison[i] = point{kind: vocab.KindCORE, what: "test relocation"}
				}
			}
			m := latest
			m.globals = tt.globals
			v, reasons, _, _ := judge(tt.insns, tt.insns, poison, m)
			if v != tt.want {
				t.Fatalf("%s %q, want %s", v, reasons, tt.want)
			}
		})
	}
}

// decisions is m without the words its reasons quote.
func decisions(m model) model {
	m.jumpsWhy, m.fillWhy, m.globalsWhy = "", "", [2]string{}
	return m
}

// TestModelFor: without the kernel's types the release decides the
// model; with them, the types decide what they show, whatever the
// release says, and the release only what they do not.
func TestModelFor(t *testing.T) {
	for release, want := range map[string]model{
		"4.15.0-20-generic":    {globals: globalsStatic, jumps: jumpsEqImm},
		"5.4.0-91-generic":     {globals: globalsStatic, jumps: jumpsImm},
		"5.10.0-28-amd64":      {globals: globalsEager, jumps: jumpsAll},
		"6.1.0-47-amd64":       {globals: globalsEager, jumps: jumpsAll, narrowFill: true},
		"6.8.0-1-generic":      latest,
		"6.12.118+deb12-amd64": latest,
		"7.0":                  latest,
		"":                     {globals: globalsUnsure, jumps: jumpsEqImm},
		"custom":               {globals: globalsUnsure, jumps: jumpsEqImm},
	} {
		if got := decisions(modelFor(release, nil)); got != want {
			t.Errorf("modelFor(%q, nil) = %+v, want %+v", release, got, want)
		}
	}
	// What the types of Linux 5.6 to 6.7 show: global functions, not
	// lazy; and of 6.8 on.
	eager := &Kernel{Features: map[Feature]bool{FeatureCalls: true, FeatureGlobalData: true, FeatureReadOnlyMaps: true, FeatureGlobalFuncs: true, FeatureLazyGlobals: false}}
	lazy := &Kernel{Features: map[Feature]bool{FeatureCalls: true, FeatureGlobalData: true, FeatureReadOnlyMaps: true, FeatureGlobalFuncs: true, FeatureLazyGlobals: true}}
	old := &Kernel{Features: map[Feature]bool{FeatureCalls: true, FeatureGlobalData: false, FeatureReadOnlyMaps: false}}
	for _, tt := range []struct {
		release string
		k       *Kernel
		want    model
	}{
		// A vendor's release understates: the types decide global
		// functions; 5.2's markers imply 5.0's branches; 5.7's and
		// 5.17's, which no type marks, are left to the release.
		{"4.18.0-305.el8.x86_64", eager, model{globals: globalsEager, jumps: jumpsImm}},
		{"4.19.90-52.22.v2207.ky10.aarch64", eager, model{globals: globalsEager, jumps: jumpsImm}},
		// Ring buffers (5.8) and bpf_loop (5.17) imply 5.7's branches
		// and 5.17's fills.
		{"4.18.0-305.el8.x86_64", &Kernel{Features: map[Feature]bool{FeatureGlobalFuncs: true, FeatureRingbuf: true, FeatureLoop: true, FeatureLazyGlobals: false}}, model{globals: globalsEager, jumps: jumpsAll, narrowFill: true}},
		{"4.18.0-305.el8.x86_64", &Kernel{Features: map[Feature]bool{FeatureGlobalFuncs: true, FeatureRingbuf: true, FeatureLoop: false, FeatureLazyGlobals: false}}, model{globals: globalsEager, jumps: jumpsAll}},
		// 6.8's marker implies everything before it.
		{"4.18.0-513.el8.x86_64", lazy, latest},
		{"a12-5.10-2021-09-arm64", lazy, latest},
		// An unparsable release gets the types' decisions, and the
		// cautious model only where they do not decide.
		{"a12-5.10-2021-09-arm64", eager, model{globals: globalsEager, jumps: jumpsImm}},
		{"6.1.0-47-amd64", eager, model{globals: globalsEager, jumps: jumpsAll, narrowFill: true}},
		// Types that lack 5.2's markers say the kernel lacks what came
		// after, whatever its release claims; 5.0's branches, before,
		// are left to the release.
		{"6.1.0-47-amd64", old, model{globals: globalsStatic, jumps: jumpsImm}},
		// Types that do not show global functions at all (no struct
		// bpf_prog_aux): the walk explores them both ways.
		{"4.18.0-305.el8.x86_64", &Kernel{}, model{globals: globalsUnsure, jumps: jumpsEqImm}},
	} {
		if got := decisions(modelFor(tt.release, tt.k)); got != tt.want {
			t.Errorf("modelFor(%q, %v) = %+v, want %+v", tt.release, tt.k.Features, got, tt.want)
		}
	}
}

// TestWalkOlderVerifiers: what an older verifier does not decide, the
// walk does not count as a guard.
func TestWalkOlderVerifiers(t *testing.T) {
	exit := []asm.Instruction{asm.Mov.Imm(asm.R0, 0), asm.Return()}
	guardReg := append(asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		asm.Mov.Imm(asm.R2, 1),
		jmp(asm.JLT.Reg(asm.R1, asm.R2, ""), 1),
		poisonCall(),
	}, exit...)
	guardGT := append(asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		jmp(asm.JLT.Imm(asm.R1, 1, ""), 1),
		poisonCall(),
	}, exit...)
	guardEq := append(asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
		poisonCall(),
	}, exit...)
	narrowSpill := append(asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, -4, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.RFP, -4, asm.Word),
		jmp(asm.JEq.Imm(asm.R1, 0, ""), 1),
		poisonCall(),
	}, exit...)
	unguardedAfterJump := append(asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		asm.Mov.Imm(asm.R2, 1),
		jmp(asm.JLT.Reg(asm.R1, asm.R2, ""), 0),
		poisonCall(),
	}, exit...)
	for _, tt := range []struct {
		name    string
		insns   asm.Instructions
		release string
		want    vocab.Verdict
	}{
		{"register comparison, 6.1", guardReg, "6.1.0", vocab.Loads},
		{"register comparison, 5.4", guardReg, "5.4.0", vocab.Unknown},
		{"less than an immediate, 5.4", guardGT, "5.4.0", vocab.Loads},
		{"less than an immediate, 4.19", guardGT, "4.19.0", vocab.Unknown},
		{"equality, 4.19", guardEq, "4.19.0", vocab.Loads},
		{"narrow spill, 6.1", narrowSpill, "6.1.0", vocab.Loads},
		{"narrow spill, 5.10", narrowSpill, "5.10.0", vocab.Unknown},
		// The way the constants go reaches the poison on every kernel.
		{"poison on the way the constants go, 5.4", unguardedAfterJump, "5.4.0", vocab.Fails},
	} {
		t.Run(tt.name, func(t *testing.T) {
			poison := map[int]point{}
			for i := range tt.insns {
				if isPoison(&tt.insns[i]) {
					poison[i] = point{kind: vocab.KindCORE, what: "test relocation"}
				}
			}
			v, reasons, _, _ := judge(tt.insns, tt.insns, poison, modelFor(tt.release, nil))
			if v != tt.want {
				t.Fatalf("%s %q, want %s", v, reasons, tt.want)
			}
		})
	}
}

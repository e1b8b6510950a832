package predict

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/btfembed/btfembed/internal/vocab"
)

// TestCheckCalls: i386 and arm run bpf-to-bpf calls interpreted and
// refuse callbacks; without an interpreter every call fails; an
// unrecognized 32-bit kernel is unknown, and 64-bit JITs compile calls.
func TestCheckCalls(t *testing.T) {
	exit := asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}
	call := append(asm.Instructions{asm.Call.Label("sub")}, exit...)
	call = append(call, exit[0].WithSymbol("sub"), exit[1])
	callback := append(asm.Instructions{asm.LoadMapPtr(asm.R2, 0)}, exit...)
	callback[0] = asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: asm.R2, Src: asm.PseudoFunc}.WithReference("sub")
	callback = append(callback, exit[0].WithSymbol("sub"), exit[1])
	tail := append(asm.Instructions{asm.FnTailCall.Call()}, call...)
	for _, tt := range []struct {
		arch        string
		long        uint32
		interpreter bool
		insns       asm.Instructions
		want        vocab.Verdict // of the JIT's reason; Loads: none
		text        string
	}{
		{"i386", 4, true, call, vocab.Loads, ""},
		{"i386", 4, true, callback, vocab.Fails, "the x86-32 JIT does not compile bpf-to-bpf calls, and the interpreter refuses callbacks"},
		{"i386", 4, false, call, vocab.Fails, "no interpreter to fall back on"},
		{"i386", 4, true, tail, vocab.Unknown, "tail_calls are not allowed"},
		{"arm", 4, true, call, vocab.Loads, ""},
		{"arm", 4, true, callback, vocab.Fails, "the 32-bit arm JIT does not compile bpf-to-bpf calls (and is off by default), and the interpreter refuses callbacks"},
		{"arm", 4, false, call, vocab.Fails, "no interpreter to fall back on"},
		{"arm", 4, true, tail, vocab.Unknown, "tail_calls are not allowed"},
		{"", 4, true, call, vocab.Unknown, "is not modeled"},
		{"x86_64", 8, false, callback, vocab.Loads, ""},
		{"arm64", 8, false, call, vocab.Loads, ""},
	} {
		var b beyond
		b.checkCalls(tt.insns, &Kernel{Arch: tt.arch, LongSize: tt.long, Interpreter: tt.interpreter})
		var got vocab.Verdict = vocab.Loads
		var reasons []Reason
		switch {
		case len(b.after) > 0:
			got, reasons = vocab.Fails, b.after
		case len(b.unknown) > 0:
			got, reasons = vocab.Unknown, b.unknown
		}
		if got != tt.want || len(reasons) > 1 || got != vocab.Loads && (reasons[0].Kind != vocab.KindJIT || !strings.Contains(reasons[0].Text, tt.text)) {
			t.Errorf("%s (long %d, interpreter %v), %d insns: %s %q, want %s %q", tt.arch, tt.long, tt.interpreter, len(tt.insns), got, reasons, tt.want, tt.text)
		}
	}
}

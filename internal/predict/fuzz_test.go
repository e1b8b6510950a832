package predict

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/btfembed/btfembed/internal/vocab"
)

// FuzzWalk runs the walk on arbitrary instructions, every third one
// poisoned: whatever the bytes, it ends with a verdict, never a panic or
// a hang.
func FuzzWalk(f *testing.F) {
	var seed bytes.Buffer
	for _, ins := range []asm.Instruction{
		asm.Mov.Imm(asm.R1, 1),
		asm.JEq.Imm(asm.R1, 0, ""),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.LoadMem(asm.R2, asm.RFP, -8, asm.DWord),
		asm.FnProbeReadKernel.Call(),
		asm.Return(),
	} {
		if _, err := ins.Marshal(&seed, binary.LittleEndian); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(seed.Bytes())
	f.Fuzz(func(t *testing.T, raw []byte) {
		var insns asm.Instructions
		r := bytes.NewReader(raw)
		for r.Len() > 0 {
			var ins asm.Instruction
			if err := ins.Unmarshal(r, binary.LittleEndian, "linux"); err != nil {
				break
			}
			insns = append(insns, ins)
		}
		if len(insns) == 0 {
			return
		}
		poison := map[int]point{}
		for i := 0; i < len(insns); i += 3 {
			poison[i] = point{kind: vocab.KindCORE, what: "fuzz"}
		}
		for _, release := range []string{"6.18", "5.4", ""} {
			judge(insns, insns, poison, modelFor(release, nil))
		}
	})
}

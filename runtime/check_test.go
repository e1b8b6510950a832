package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/vocab"
)

// decodesAll fails t unless every type of the selection's specs decodes:
// what an agent's CO-RE relocation may ask cilium/ebpf for.
func decodesAll(t *testing.T, what string, sel *Selection) {
	t.Helper()
	if err := decodeEvery(sel.Spec); err != nil {
		t.Fatalf("%s: Lookup accepted vmlinux BTF that cilium/ebpf cannot decode: %v", what, err)
	}
	for name, spec := range sel.Modules {
		if err := decodeEvery(spec); err != nil {
			t.Fatalf("%s: Lookup accepted BTF of module %s that cilium/ebpf cannot decode: %v", what, name, err)
		}
	}
}

// decodeEvery decodes every type of spec, base types included for split
// BTF, and returns the first error. Not spec.All: it ends quietly at any
// error wrapping btf.ErrNotFound, which a reference past the last type
// gives. The end is the ID that is itself not found (cilium/ebpf v0.22's
// wording).
func decodeEvery(spec *btf.Spec) error {
	for id := btf.TypeID(1); ; id++ {
		_, err := spec.TypeByID(id)
		if err == nil {
			continue
		}
		if errors.Is(err, btf.ErrNotFound) && err.Error() == fmt.Sprintf("inflate type: type id %d: %v", id, btf.ErrNotFound) {
			return nil
		}
		return err
	}
}

// TestLookupChecksBTF embeds BTF that cilium/ebpf loads but cannot
// decode. Lookup handed it out (issue 33: "string at offset 172 is not
// null terminated" in the agent's relocation); it must fail with
// ErrCorrupt instead.
func TestLookupChecksBTF(t *testing.T) {
	info := payloadtest.Info
	intType := []uint32{0, info(rawbtf.KindInt, 0, false), 4, 32}
	ptr := []uint32{0, info(rawbtf.KindPtr, 0, false), 1}
	st := func(nameOff uint32) []uint32 { return []uint32{1, info(rawbtf.KindStruct, 1, false), 4, nameOff, 1, 0} }
	tag := func(target, component uint32) []uint32 {
		return []uint32{1, info(rawbtf.KindDeclTag, 0, false), target, component}
	}
	for name, raw := range map[string][]byte{
		"member name at the end of the strings": payloadtest.RawBTF([][]uint32{intType, st(3)}, "s\x00"),
		"member name inside a string":           payloadtest.RawBTF([][]uint32{intType, st(2)}, "st\x00"),
		"enum value name past the strings": payloadtest.RawBTF([][]uint32{
			{1, info(rawbtf.KindEnum, 1, false), 4, 40, 0}}, "e\x00"),
		"parameter name inside a string": payloadtest.RawBTF([][]uint32{intType,
			{0, info(rawbtf.KindFuncProto, 1, false), 1, 2, 1}}, "pp\x00"),
		"decl tag on a pointer":              payloadtest.RawBTF([][]uint32{intType, ptr, tag(2, 0xffffffff)}, "t\x00"),
		"decl tag on a member past the last": payloadtest.RawBTF([][]uint32{intType, st(1), tag(2, 1)}, "t\x00"),
		"decl tag on a function of no prototype": payloadtest.RawBTF([][]uint32{intType,
			{1, info(rawbtf.KindFunc, 0, false), 1}, tag(2, 0xffffffff)}, "f\x00"),
	} {
		if _, err := btf.LoadSplitSpecFromReader(bytes.NewReader(raw), nil); err != nil {
			t.Fatalf("%s: cilium/ebpf does not load it (%v): not a case", name, err)
		}
		key := Key{Arch: "x86_64", Release: "bad"}
		_, err := open(t, payloadtest.Stored(t, []Key{key}, [][]byte{raw})).Lookup(key)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Lookup: error %v, want ErrCorrupt", name, err)
		}
	}

	// A module's split BTF is checked the same way.
	vmlinux := payloadtest.RawBTF([][]uint32{intType}, "")
	split := splitBTF(t, [][]uint32{st(3)}, "s\x00")
	ix := payload.Index{
		Blobs: []payload.BlobRecord{
			{Codec: payload.CodecStored, N: uint64(len(vmlinux)), RawLen: uint64(len(vmlinux))},
			{Codec: payload.CodecStored, Off: uint64(len(vmlinux)), N: uint64(len(split)), RawLen: uint64(len(split))},
		},
		Entries: []payload.EntryRecord{{Key: Key{Arch: "x86_64", Release: "mod"}, Modules: []payload.ModuleRecord{{Name: "m", Split: 1}}}},
	}
	a := open(t, payloadtest.Assemble(t, ix, append(bytes.Clone(vmlinux), split...)))
	if _, err := a.Lookup(ix.Entries[0].Key); !errors.Is(err, ErrCorrupt) {
		t.Errorf("module with a member name past the strings: Lookup: error %v, want ErrCorrupt", err)
	}
}

// splitBTF is split BTF over a base of one type with the string table
// "\x00": its string offsets start at 1 and its first type is 2.
func splitBTF(tb testing.TB, types [][]uint32, strs string) []byte {
	tb.Helper()
	raw := payloadtest.RawBTF(types, strs)
	// RawBTF starts the table with a NUL of its own; split BTF's table
	// does not, so drop it and shorten str_len.
	le := binary.LittleEndian
	typeLen := le.Uint32(raw[12:])
	strStart := rawbtf.HeaderLen + int(typeLen)
	out := append(bytes.Clone(raw[:strStart]), raw[strStart+1:]...)
	le.PutUint32(out[20:], le.Uint32(raw[20:])-1)
	return out
}

// TestMutatedBTF flips bytes of embedded BTF stored as it is, so that
// every mutation reaches cilium/ebpf, and asks for every kernel: Lookup
// may fail (with ErrCorrupt), but what it hands out must decode. Before
// issue 33's fix, 978 of the 11,725 kernels Lookup accepted did not.
func TestMutatedBTF(t *testing.T) {
	var keys []Key
	var blobs [][]byte
	for _, e := range payloadtest.Entries(t) {
		keys, blobs = append(keys, e.Key), append(blobs, e.VMLinux)
	}
	good := payloadtest.Stored(t, keys, blobs)
	offs := payloadtest.StoredOffsets(good, blobs)
	start, end := offs[0], offs[len(offs)-1]
	rng := rand.New(rand.NewPCG(33, 12))
	n := 3000
	if testing.Short() {
		n = 300
	}
	accepted := 0
	for i := range n {
		p := bytes.Clone(good)
		for range 1 + rng.IntN(3) {
			p[start+rng.IntN(end-start)] ^= byte(1 + rng.IntN(255))
		}
		resum(p)
		a := open(t, p)
		for _, k := range keys {
			sel, err := a.Lookup(k)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("mutation %d: %s: error %v does not wrap ErrCorrupt", i, k, err)
				}
				continue
			}
			accepted++
			decodesAll(t, k.String(), sel)
		}
	}
	t.Logf("%d mutations: Lookup accepted %d of %d kernels", n, accepted, n*len(keys))
}

// TestPredictionsChecked: a payload's verdicts reach the agent's log line
// (Prediction.String) and its code (Kind). Issue 33: a reason's escape
// sequences and newlines reached String raw, and a kind of no documented
// verdict ("explodes") was accepted.
func TestPredictionsChecked(t *testing.T) {
	e := payloadtest.Entries(t)[0]
	withRow := func(object, kind, reason string) []byte {
		ix := payload.Index{
			Blobs:   []payload.BlobRecord{{Codec: payload.CodecStored, N: uint64(len(e.VMLinux)), RawLen: uint64(len(e.VMLinux))}},
			Entries: []payload.EntryRecord{{Key: e.Key, Verdicts: 1}},
			Verdicts: payload.VerdictTable{
				Objects: []payload.ObjectRecord{{Name: object, Programs: []string{"handle_exec"}}},
				Rows:    []payload.RowRecord{{Verdict: vocab.Fails, Kind: kind, Reasons: []string{reason}}},
				Sets:    [][]uint64{{0}},
			},
		}
		return payloadtest.Assemble(t, ix, e.VMLinux)
	}
	const forged = "ok\n2026/01/01 00:00:00 all programs load\x1b[2J\x1b[H"
	sel, err := open(t, withRow("bpf_x86_bpfel.o", "core", forged)).Lookup(e.Key)
	if err != nil {
		t.Fatal(err)
	}
	line := sel.Predictions[0].String()
	if strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 || r == 0x7f }) || !strings.Contains(line, `\x1b[2J`) {
		t.Errorf("log line %q: control characters not escaped", line)
	}
	if r := sel.Predictions[0].Reasons[0]; r != `ok\n2026/01/01 00:00:00 all programs load\x1b[2J\x1b[H` {
		t.Errorf("reason %q not escaped", r)
	}
	for name, p := range map[string][]byte{
		"kind explodes":              withRow("bpf_x86_bpfel.o", "explodes", "boom"),
		"object clearing the screen": withRow("bpf\x1b[2J.o", "core", "why"),
	} {
		if _, err := open(t, p).Lookup(e.Key); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Lookup: error %v, want ErrCorrupt", name, err)
		}
	}
	// A Prediction built by hand prints as safely.
	p := Prediction{Object: "a\nb.o", Program: "p\x00", Verdict: VerdictFails, Kind: "core\r", Reasons: []string{"\x07"}}
	if s := p.String(); s != `a\nb.o p\x00: fails (core\r: \a)` {
		t.Errorf("hand-built prediction prints %q", s)
	}
}

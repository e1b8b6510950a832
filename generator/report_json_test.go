package generator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/btfembed/btfembed/internal/vocab"
)

// TestWriteJSONLikeEncoder checks that the report, written kernel by
// kernel, has the bytes encoding/json writes for the whole document.
func TestWriteJSONLikeEncoder(t *testing.T) {
	kernel := KernelReport{
		Arch: "x86_64", Release: "5.4.0-1-<generic>&", Path: "a/b.btf", Objects: []string{"x.o", "y.o"},
		Types: 3, Bytes: 120, Modules: []ModuleReport{{Name: "nf", Types: 2, Bytes: 40}},
		Unresolved: []RelocationReport{{Object: "x.o", Section: "kprobe/f", InsnOff: 8, Kind: "field_exists",
			Type: "task_struct", Access: "0:1", Status: "absent", Reason: "no \"mm\"\n"}},
		Programs: []ProgramReport{{Object: "x.o", Program: "f", Verdict: vocab.Fails.String(), Reasons: []string{"byte_off task_struct.mm"}}},
	}
	for _, tc := range []struct {
		name   string
		report Report
	}{
		{"nil kernels", Report{Objects: []string{"x.o"}}},
		{"no kernels", Report{Kernels: []KernelReport{}, Blobs: 0}},
		{"one kernel", Report{Objects: []string{"x.o", "y.o"}, Kernels: []KernelReport{kernel}, Blobs: 1, PayloadBytes: 300}},
		{"kernels sharing rows, empty lists", Report{
			Objects: []string{"x.o"}, Kernels: []KernelReport{kernel, kernel, {Arch: "arm64", Release: "6.1", Programs: []ProgramReport{}, Objects: kernel.Objects}},
			Blobs: 1, PayloadBytes: 300,
		}},
		// omitempty omits an empty list, nil or not (the reflection
		// WriteJSON replaced wrote "unresolved": []).
		{"empty lists with omitempty", Report{
			Objects: []string{}, Kernels: []KernelReport{{Arch: "arm64", Release: "6.1", Modules: []ModuleReport{}, Unresolved: []RelocationReport{},
				Programs: []ProgramReport{{Object: "x.o", Program: "f", Verdict: vocab.Loads.String(), Reasons: []string{}, Guarded: []string{}}}, KernelTypeIDs: []RelocationReport{}}},
			Skipped: []Skipped{}, Families: []FamilyReport{},
		}},
		{"a kernels key in a string", Report{Objects: []string{kernelsKey + "null", `\n  \"kernels\": null`}, Kernels: []KernelReport{kernel}}},
		{"two kernels and skipped", Report{
			Objects: []string{"x.o"}, Kernels: []KernelReport{kernel, {Arch: "arm64", Release: "6.1"}},
			Skipped: []Skipped{{Path: "c", Error: "bad\tmagic"}}, Blobs: 2, PayloadBytes: 500,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(&tc.report); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := tc.report.WriteJSON(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("WriteJSON wrote\n%s\nencoding/json writes\n%s", got.Bytes(), want.Bytes())
			}
		})
	}
}

// benchReport is a report of 240 kernels in 12 series whose kernels share
// their row lists, as sharer leaves them: 360 programs, a tenth of them
// failing, and 120 unresolved relocations a kernel.
func benchReport() *Report {
	r := &Report{Objects: []string{"big-el.o"}, Blobs: 12, PayloadBytes: 1 << 20}
	for s := range 12 {
		var programs []ProgramReport
		for p := range 360 {
			row := ProgramReport{Object: "big-el.o", Program: fmt.Sprintf("prog_%d", p), Verdict: vocab.Loads.String()}
			if p%10 == s%10 {
				row.Verdict, row.Reason = vocab.Fails.String(), string(vocab.KindCORE)
				row.Reasons = []string{fmt.Sprintf("reachable: byte_off task_struct.mm_cid poisoned at insn %d", p)}
			}
			programs = append(programs, row)
		}
		var unresolved []RelocationReport
		for u := range 120 {
			unresolved = append(unresolved, RelocationReport{Object: "big-el.o", Section: "kprobe/f", Function: fmt.Sprintf("prog_%d", u),
				InsnOff: uint32(8 * u), Field: "byte_off task_struct.mm_cid", Kind: "byte_off", Type: "task_struct", Access: "0:42", Status: "poisoned"})
		}
		for k := range 20 {
			r.Kernels = append(r.Kernels, KernelReport{Arch: "x86_64", Release: fmt.Sprintf("5.%d.0-%d-amd64", s, k), Distro: "debian", Version: "11",
				Path: "debian/11/x86_64", Objects: r.Objects, Types: 900, Bytes: 40000, Unresolved: unresolved, Programs: programs, Fixups: "sha256:0123"})
		}
	}
	return r
}

// BenchmarkWriteJSON writes benchReport; MB/s counts the JSON written.
func BenchmarkWriteJSON(b *testing.B) {
	r := benchReport()
	var out bytes.Buffer
	if err := r.WriteJSON(&out); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(out.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := r.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

package generator

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestWriteJSONLikeEncoder checks that the report, written kernel by
// kernel, has the bytes encoding/json writes for the whole document.
func TestWriteJSONLikeEncoder(t *testing.T) {
	kernel := KernelReport{
		Arch: "x86_64", Release: "5.4.0-1-<generic>&", Path: "a/b.btf", Objects: []string{"x.o", "y.o"},
		Types: 3, Bytes: 120, Modules: []ModuleReport{{Name: "nf", Types: 2, Bytes: 40}},
		Unresolved: []RelocationReport{{Object: "x.o", Section: "kprobe/f", InsnOff: 8, Kind: "field_exists",
			Type: "task_struct", Access: "0:1", Status: "absent", Reason: "no \"mm\"\n"}},
		Programs: []ProgramReport{{Object: "x.o", Program: "f", Verdict: VerdictFails, Reasons: []string{"byte_off task_struct.mm"}}},
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

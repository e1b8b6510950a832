package libbpftest

import (
	"strings"
	"testing"
)

// Lines of libbpf 1.1's log, as the loader prints them for
// internal/coremin/testdata/patterns/type_id.o against type_id___all.o.
const (
	header      = "libbpf: prog 'type_id': relo #1: <target_type_id> [5] struct core_type_id_s\n"
	candidate   = "libbpf: prog 'type_id': relo #1: matching candidate #0 <target_type_id> [13] struct core_type_id_s\n"
	patchedID   = "libbpf: prog 'type_id': relo #1: patched insn #5 (LDIMM64) imm64 5 -> 13\n"
	localHeader = "libbpf: prog 'type_id': relo #0: <local_type_id> [5] struct core_type_id_s\n"
	patchedLoc  = "libbpf: prog 'type_id': relo #0: patched insn #0 (LDIMM64) imm64 5 -> 5\n"
	poisoned    = "libbpf: prog 'type_id': relo #1: substituting insn #5 w/ invalid insn\n"
	failed      = "libbpf: prog 'type_id': relo #1: failed to relocate: -22\nlibbpf: failed to perform CO-RE relocations: -22\n"
	done        = "result: load 0\n"
)

const target = "../../internal/coremin/testdata/patterns/type_id___all.o"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      map[string]string // relocation -> decision
		wantErr   string            // Decisions.Err
		fails     string            // parse's error, if any
	}{
		{
			name: "target ID by kind and name",
			log:  localHeader + patchedLoc + header + candidate + patchedID + done,
			want: map[string]string{
				"prog 'type_id': relo #0": "patched insn #0 (LDIMM64) imm64 5 -> 5",
				"prog 'type_id': relo #1": `patched insn #5 (LDIMM64) imm64 5 -> *btf.Struct "core_type_id_s"`,
			},
		},
		{
			name: "poison",
			log:  header + poisoned + done,
			want: map[string]string{"prog 'type_id': relo #1": "substituting insn #5 w/ invalid insn"},
		},
		{
			name:    "relocation error",
			log:     header + candidate + failed + done,
			want:    map[string]string{"prog 'type_id': relo #1": "failed to relocate: -22"},
			wantErr: "CO-RE relocation failed: -22",
		},
		{name: "a relocation without decision", log: header + candidate + done, fails: "states no decision"},
		{name: "no result line", log: header + patchedID, fails: "no result line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parse([]byte(tc.log), "type_id.o", target)
			if tc.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Fatalf("error %v, want one saying %q", err, tc.fails)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Err != tc.wantErr {
				t.Errorf("Err %q, want %q", d.Err, tc.wantErr)
			}
			if len(d.Relocations) != len(tc.want) {
				t.Errorf("%d decisions, want %d: %v", len(d.Relocations), len(tc.want), d.Relocations)
			}
			for relo, want := range tc.want {
				if got := d.Relocations[relo]; got != want {
					t.Errorf("%s: %q, want %q", relo, got, want)
				}
			}
		})
	}
}

func TestDiff(t *testing.T) {
	a := &Decisions{Relocations: map[string]string{"r0": "patched insn #0 (ALU/ALU64) imm 8 -> 16", "r1": "x"}}
	b := &Decisions{Relocations: map[string]string{"r0": "patched insn #0 (ALU/ALU64) imm 8 -> 24", "r2": "y"}, Err: "CO-RE relocation failed: -7"}
	got := Diff(a, b)
	want := []string{
		`CO-RE step: "" vs "CO-RE relocation failed: -7"`,
		`r0: "patched insn #0 (ALU/ALU64) imm 8 -> 16" vs "patched insn #0 (ALU/ALU64) imm 8 -> 24"`,
		`r1: "x" vs none`,
		`r2: none vs "y"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := Diff(a, a); len(d) != 0 {
		t.Errorf("Diff of a with itself: %v", d)
	}
}

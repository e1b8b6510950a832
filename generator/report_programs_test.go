package generator

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/vocab"
)

func TestGroupLabel(t *testing.T) {
	for i, want := range map[int]string{0: "A", 25: "Z", 26: "AA", 27: "AB", 701: "ZZ", 702: "AAA"} {
		if got := groupLabel(i); got != want {
			t.Errorf("groupLabel(%d) = %q, want %q", i, got, want)
		}
	}
}

// TestProgramTable: kernels with the same predictions share a column;
// only programs that do not load everywhere have a row; unknown alone
// does not fail CheckLoadable.
func TestProgramTable(t *testing.T) {
	loads := ProgramReport{Object: "a.o", Program: "p", Verdict: vocab.Loads.String()}
	fails := ProgramReport{Object: "a.o", Program: "p", Verdict: vocab.Fails.String(), Reasons: []string{"reachable: byte_off task_struct.mm_cid poisoned at insn 3"}}
	unknown := ProgramReport{Object: "a.o", Program: "q", Verdict: vocab.Unknown.String(), Reasons: []string{"maybe reachable"}}
	fine := ProgramReport{Object: "a.o", Program: "r", Verdict: vocab.Loads.String(), Guarded: []string{"field_exists x poisoned at insn 1"}}
	kernel := func(release string, programs ...ProgramReport) KernelReport {
		return KernelReport{Arch: "x86_64", Release: release, Programs: programs}
	}
	for _, tt := range []struct {
		name     string
		kernels  []KernelReport
		want     []string
		notWant  []string
		loadable bool
	}{
		{
			name:     "all load",
			kernels:  []KernelReport{kernel("6.1", loads, fine), kernel("6.12", loads, fine)},
			want:     []string{"all 2 programs load on every kernel"},
			notWant:  []string{"Why:"},
			loadable: true,
		},
		{
			name:    "fails on one group",
			kernels: []KernelReport{kernel("6.1", fails, unknown, fine), kernel("6.2", fails, unknown, fine), kernel("6.12", loads, unknown, fine)},
			want: []string{
				"2 of 3 programs do not load",
				"a.o     p        fails    ok",
				"a.o     q        unknown  unknown",
				"A: x86_64/6.1, x86_64/6.2",
				"B: x86_64/6.12",
				"a.o p on A: fails\n      reachable: byte_off task_struct.mm_cid poisoned at insn 3",
				"a.o q on A, B: unknown",
			},
			notWant: []string{"  r  ", "Guarded misses"},
		},
		{
			name: "objects paired with some kernels only",
			kernels: []KernelReport{
				{Arch: "x86_64", Release: "6.1", Programs: []ProgramReport{fails, fine}},
				{Arch: "arm64", Release: "6.1", Programs: []ProgramReport{{Object: "b.o", Program: "p", Verdict: vocab.Loads.String()}, fine}},
			},
			want: []string{"a.o     p        fails  -", "A: x86_64/6.1", "B: arm64/6.1"},
		},
		{
			name: "many kernel groups, one letter a cell",
			kernels: func() []KernelReport {
				var ks []KernelReport
				for i := range compactGroups + 1 {
					// Each kernel fails for a reason of its own.
					f := fails
					f.Reasons = []string{fmt.Sprint("reason ", i)}
					ks = append(ks, kernel(fmt.Sprint("6.", i), f, unknown, fine))
				}
				return append(ks, kernel("7.0", loads, unknown, fine))
			}(),
			want: []string{"F: fails, ?: unknown", "a.o    p       F F F F F F F F F .", "a.o    q       ? ? ? ? ? ? ? ? ? ?"},
		},
		{
			name:     "unknown does not fail the run",
			kernels:  []KernelReport{kernel("6.1", unknown, fine)},
			want:     []string{"a.o     q        unknown"},
			loadable: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Kernels: tt.kernels}
			var b bytes.Buffer
			if err := r.writePrograms(&b, false); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("has %q:\n%s", w, b.String())
				}
			}
			if err := r.CheckLoadable(); (err == nil) != tt.loadable || err != nil && !errors.Is(err, ErrUnloadable) {
				t.Errorf("CheckLoadable: %v", err)
			}
			b.Reset()
			if err := r.writePrograms(&b, true); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "a.o r: field_exists x poisoned at insn 1, on") {
				t.Errorf("verbose lacks the guarded miss:\n%s", b.String())
			}
		})
	}
}

package relodigest

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

func load(tb testing.TB, parts ...string) *ebpf.CollectionSpec {
	tb.Helper()
	spec, err := ebpf.LoadCollectionSpec(filepath.Join(append([]string{"..", ".."}, parts...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return spec
}

func programs(tb testing.TB, spec *ebpf.CollectionSpec) map[string]Digest {
	tb.Helper()
	d, err := Programs(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in           string
		kind, access string
		id           btf.TypeID
		bad          bool
	}{
		{in: `CORERelocation(byte_off, Struct:"task_struct"[0:1], local_id=25)`, kind: "byte_off", access: "0:1", id: 25},
		{in: `CORERelocation(enumval_value, Enum:"e"[3], local_id=7)`, kind: "enumval_value", access: "3", id: 7},
		// A name may hold what the format uses: the access string is
		// the last bracketed part.
		{in: `CORERelocation(type_size, Struct:"a[1], local_id=2"[0], local_id=9)`, kind: "type_size", access: "0", id: 9},
		{in: `CORERelocation(byte_off, Struct:"s"[], local_id=1)`, bad: true},
		{in: `CORERelocation(byte_off, Struct:"s"[0:x], local_id=1)`, bad: true},
		{in: `CORERelocation(byte_off, Struct:"s"[0], local_id=-1)`, bad: true},
		{in: `CORERelocation(byte_off Struct:"s"[0], local_id=1)`, bad: true},
		{in: `Relocation(byte_off, Struct:"s"[0], local_id=1)`, bad: true},
		{in: `CORERelocation(byte_off, Struct:"s"[0], id=1)`, bad: true},
	} {
		kind, access, id, err := parse(tc.in)
		switch {
		case tc.bad && err == nil:
			t.Errorf("parse(%s) = %s %s %d, want an error", tc.in, kind, access, id)
		case !tc.bad && (err != nil || kind != tc.kind || access != tc.access || id != tc.id):
			t.Errorf("parse(%s) = %s %s %d, %v; want %s %s %d", tc.in, kind, access, id, err, tc.kind, tc.access, tc.id)
		}
	}
}

// TestPrograms digests real objects: equal relocations give equal
// digests whatever else differs, other relocations other digests.
func TestPrograms(t *testing.T) {
	x86 := programs(t, load(t, "examples", "execsnoop", "bpf_x86_bpfel.o"))
	arm64 := programs(t, load(t, "examples", "execsnoop", "bpf_arm64_bpfel.o"))
	fields := programs(t, load(t, "testdata", "objects", "fields-el.o"))
	fieldsEB := programs(t, load(t, "testdata", "objects", "fields-eb.o"))
	none := programs(t, &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{"p": {}}})["p"]

	if got := slices.Sorted(func(yield func(string) bool) {
		for n := range x86 {
			yield(n)
		}
	}); !slices.Equal(got, []string{"count_exec", "handle_exec"}) {
		t.Fatalf("execsnoop's programs: %v", got)
	}
	for _, tc := range []struct {
		name string
		a, b Digest
		same bool
	}{
		// One C source, built for two architectures: its kernel types
		// are declared in it, so the relocations are the same.
		{"execsnoop handle_exec, x86 and arm64", x86["handle_exec"], arm64["handle_exec"], true},
		{"execsnoop count_exec, x86 and arm64", x86["count_exec"], arm64["count_exec"], true},
		{"fields, little and big endian", fields["read_fields"], fieldsEB["read_fields"], true},
		{"execsnoop handle_exec and count_exec", x86["handle_exec"], x86["count_exec"], false},
		{"execsnoop handle_exec and fields read_fields", x86["handle_exec"], fields["read_fields"], false},
		{"handle_exec and no relocation", x86["handle_exec"], none, false},
	} {
		if (tc.a == tc.b) != tc.same || tc.a == (Digest{}) {
			t.Errorf("%s: %x and %x, want equal: %v", tc.name, tc.a, tc.b, tc.same)
		}
	}
}

// TestProgramsCode checks that a program's digest follows its
// relocations, not its code: an instruction added before them changes
// nothing, a relocation dropped changes the digest.
func TestProgramsCode(t *testing.T) {
	spec := load(t, "examples", "execsnoop", "bpf_x86_bpfel.o")
	want := programs(t, spec)["handle_exec"]
	prog := spec.Programs["handle_exec"]

	moved := spec.Copy()
	p := moved.Programs["handle_exec"]
	p.Instructions = append(asm.Instructions{asm.Mov.Reg(asm.R0, asm.R0)}, p.Instructions...)
	if got := programs(t, moved)["handle_exec"]; got != want {
		t.Errorf("an instruction added: digest %x, want %x", got, want)
	}

	dropped := spec.Copy()
	p = dropped.Programs["handle_exec"]
	i := slices.IndexFunc(prog.Instructions, func(ins asm.Instruction) bool { return btf.CORERelocationMetadata(&ins) != nil })
	p.Instructions = slices.Delete(slices.Clone(p.Instructions), i, i+1)
	if got := programs(t, dropped)["handle_exec"]; got == want {
		t.Errorf("a relocation dropped: digest unchanged %x", got)
	}
}

// BenchmarkPrograms digests the big test object (399 programs, 33,857
// CO-RE relocations), what Check costs an agent with such an object at
// start-up, and the execsnoop example's.
func BenchmarkPrograms(b *testing.B) {
	for _, path := range [][]string{{"testdata", "objects", "big", "big-el.o"}, {"examples", "execsnoop", "bpf_x86_bpfel.o"}} {
		spec := load(b, path...)
		b.Run(path[len(path)-1], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Programs(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

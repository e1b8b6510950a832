package generator

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/btfembed/btfembed/internal/vocab"
)

// TestSharedRows: a kernel's row list is replaced by an earlier one
// exactly when the report shows them alike, so sharing never swaps one
// kernel's rows for another's, and equal lists are held once.
func TestSharedRows(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b ProgramReport
		same bool
	}{
		{"nil and empty lists", ProgramReport{Reasons: nil}, ProgramReport{Reasons: []string{}}, true},
		{"equal rows", ProgramReport{Object: "o", Program: "p", Verdict: vocab.Fails.String(), Reasons: []string{"x"}}, ProgramReport{Object: "o", Program: "p", Verdict: vocab.Fails.String(), Reasons: []string{"x"}}, true},
		{"a boundary moved", ProgramReport{Object: "a", Program: "bc"}, ProgramReport{Object: "ab", Program: "c"}, false},
		{"reasons or guarded", ProgramReport{Reasons: []string{"x"}}, ProgramReport{Guarded: []string{"x"}}, false},
		{"one reason or two", ProgramReport{Reasons: []string{"a:b"}}, ProgramReport{Reasons: []string{"a", "b"}}, false},
		{"a reason moved to guarded", ProgramReport{Reasons: []string{"a", "b"}}, ProgramReport{Reasons: []string{"a"}, Guarded: []string{"b"}}, false},
		{"other guarded", ProgramReport{Guarded: []string{"x"}}, ProgramReport{Guarded: []string{"y"}}, false},
		{"another verdict", ProgramReport{Verdict: vocab.Loads.String()}, ProgramReport{Verdict: vocab.Unknown.String()}, false},
	} {
		s := newSharer(true)
		first := []ProgramReport{{Program: "before"}, c.a}
		second := []ProgramReport{{Program: "before"}, c.b}
		s.programs.shared(first)
		got := s.programs.shared(second)
		if shared := &got[0] == &first[0]; shared != c.same {
			t.Errorf("%s: second list shared the first's %v, want %v", c.name, shared, c.same)
		}
		if again := s.programs.shared(second); &again[0] != &got[0] {
			t.Errorf("%s: the same list asked again gave another", c.name)
		}
	}
	s := newSharer(true)
	a := []RelocationReport{{Object: "o", InsnOff: 12, Kind: "3"}}
	b := []RelocationReport{{Object: "o", InsnOff: 123}}
	c := []RelocationReport{{Object: "o", InsnOff: 12, Kind: "3"}}
	s.relocs.shared(a)
	if got := s.relocs.shared(b); &got[0] != &b[0] {
		t.Error("relocation rows with other offsets and kinds were shared")
	}
	if got := s.relocs.shared(c); &got[0] != &a[0] {
		t.Error("equal relocation rows were not shared")
	}
}

// TestSharedRowsReleased: a kernel's row list that an equal earlier one
// replaced is not held by the sharer. Holding each made a run's live heap
// grow with its kernels (about 40 KB each).
func TestSharedRowsReleased(t *testing.T) {
	s := newSharer(true)
	s.programs.shared([]ProgramReport{{Program: "p", Verdict: vocab.Loads.String()}})
	var freed <-chan struct{}
	func() {
		again := []ProgramReport{{Program: "p", Verdict: vocab.Loads.String()}}
		freed = watchCollection(&again[0])
		if got := s.programs.shared(again); &got[0] == &again[0] {
			t.Fatal("an equal list was not shared")
		}
	}()
	ok := collectedWithin(freed, 100)
	runtime.KeepAlive(s)
	if !ok {
		t.Fatal("the sharer holds the replaced list after 100 collections")
	}
}

// TestSharedRowsInterned: the lists a Generate run keeps share their
// strings, however each kernel's rows spelled them, and the lists it
// drops are not interned; Merge's sharer leaves strings as they are.
func TestSharedRowsInterned(t *testing.T) {
	fresh := func(s string) string { return strings.Clone(s) }
	list := func(verdict string) []ProgramReport {
		return []ProgramReport{{Object: fresh("o"), Program: fresh("p"), Verdict: verdict, Reasons: []string{fresh("r")}}}
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

	s := newSharer(true)
	a := s.programs.shared(list(vocab.Fails.String()))
	b := s.programs.shared(list(vocab.Unknown.String())) // differs: kept
	if !same(a[0].Program, b[0].Program) || !same(a[0].Object, b[0].Object) || !same(a[0].Reasons[0], b[0].Reasons[0]) {
		t.Error("two kept lists do not share their equal strings")
	}
	dropped := list(vocab.Fails.String())
	if got := s.programs.shared(dropped); &got[0] != &a[0] {
		t.Fatal("an equal list was not replaced")
	}
	if same(dropped[0].Program, a[0].Program) {
		t.Error("a replaced list was interned")
	}
	r1 := s.relocs.shared([]RelocationReport{{Object: fresh("o"), Type: fresh("task_struct"), InsnOff: 1}})
	r2 := s.relocs.shared([]RelocationReport{{Object: fresh("o"), Type: fresh("task_struct"), InsnOff: 2}})
	if !same(r1[0].Type, r2[0].Type) {
		t.Error("two kept relocation lists do not share their equal strings")
	}

	m := newSharer(false)
	c := m.programs.shared(list(vocab.Fails.String()))
	d := m.programs.shared(list(vocab.Unknown.String()))
	if same(c[0].Program, d[0].Program) {
		t.Error("Merge's sharer interned its lists")
	}
}

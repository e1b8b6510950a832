package payload

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/btfembed/btfembed/internal/safetext"
	"github.com/btfembed/btfembed/internal/vocab"
)

// ValidName reports whether name can be an object's or a program's name:
// not empty, valid UTF-8 and printable throughout (bpf2go's object file
// names and C identifiers are), so that an agent can print it as it is.
func ValidName(name string) bool { return name != "" && safetext.Escape(name) == name }

// ObjectRecord is an object that some row is about: its name (the file's
// base name) and the names of all its programs, sorted, which is how a
// reader tells which object a collection it is given was read from.
type ObjectRecord struct {
	Name     string
	Programs []string
}

// RowRecord is the verdict on one program of one object.
type RowRecord struct {
	Object  uint64        // index in VerdictTable.Objects
	Program uint64        // index in that object's Programs
	Verdict vocab.Verdict // vocab.Fails or vocab.Unknown
	// Kind is what the verdict is about, a valid vocab.Kind (core,
	// helper, map_type, ...); Reasons say what, the first first.
	Kind    string
	Reasons []string
}

// VerdictTable is the verdicts section: objects, rows and sets of rows,
// each stored once however many kernels share it. Rows are sorted by
// object, program, verdict, kind and reasons; a set lists row indices in
// increasing order, at most one row per program.
type VerdictTable struct {
	Objects []ObjectRecord
	Rows    []RowRecord
	Sets    [][]uint64
}

// marshal encodes the section, nil when there is no set.
func (t *VerdictTable) marshal() []byte {
	if len(t.Sets) == 0 {
		return nil
	}
	u := func(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
	s := func(b []byte, v string) []byte { return append(u(b, uint64(len(v))), v...) }
	var b []byte
	b = u(b, uint64(len(t.Objects)))
	for _, o := range t.Objects {
		b = s(b, o.Name)
		b = u(b, uint64(len(o.Programs)))
		for _, p := range o.Programs {
			b = s(b, p)
		}
	}
	b = u(b, uint64(len(t.Rows)))
	for _, r := range t.Rows {
		b = u(u(u(b, r.Object), r.Program), uint64(r.Verdict))
		b = s(b, r.Kind)
		b = u(b, uint64(len(r.Reasons)))
		for _, why := range r.Reasons {
			b = s(b, why)
		}
	}
	b = u(b, uint64(len(t.Sets)))
	for _, set := range t.Sets {
		b = u(b, uint64(len(set)))
		prev := uint64(0)
		for i, row := range set {
			if i == 0 {
				b = u(b, row)
			} else {
				b = u(b, row-prev-1)
			}
			prev = row
		}
	}
	return b
}

// readVerdicts decodes and validates a verdicts section that the directory
// says holds sets sets, charging bud for its records (the caller has
// charged the copy of raw). Names must be ValidName and kinds valid;
// reasons are free text, which the runtime escapes. On error it has given
// back what it charged.
func readVerdicts(raw []byte, sets uint64, bud *Budget) (*VerdictTable, error) {
	r := newReader(raw, "verdicts", bud)
	t, err := r.verdicts(sets)
	if err == nil {
		err = r.err
	}
	if err != nil {
		r.err = err
		return nil, r.failed()
	}
	return t, nil
}

func (r *reader) verdicts(sets uint64) (*VerdictTable, error) {
	t := &VerdictTable{Objects: make([]ObjectRecord, r.alloc(r.count("objects", 2), unsafe.Sizeof(ObjectRecord{}), "objects"))}
	for i := range t.Objects {
		o := &t.Objects[i]
		o.Name = r.str("object name")
		o.Programs = make([]string, r.alloc(r.count("programs", 1), uintptr(sizeString), "programs"))
		for j := range o.Programs {
			o.Programs[j] = r.str("program name")
			if r.err == nil && (!ValidName(o.Programs[j]) || j > 0 && o.Programs[j-1] >= o.Programs[j]) {
				r.fail("object %q: empty, unprintable or unsorted program name %q", o.Name, o.Programs[j])
			}
		}
		if r.err == nil && (!ValidName(o.Name) || len(o.Programs) == 0) {
			r.fail("object %d: no name, an unprintable one (%q), or no program", i, o.Name)
		}
	}
	t.Rows = make([]RowRecord, r.alloc(r.count("rows", 4), unsafe.Sizeof(RowRecord{}), "rows"))
	for i := range t.Rows {
		row := &t.Rows[i]
		row.Object = r.below("row object", len(t.Objects))
		if r.err != nil {
			return nil, r.err
		}
		row.Program = r.below("row program", len(t.Objects[row.Object].Programs))
		// Programs that load have no row.
		if v := r.uv("row verdict"); r.err == nil && v != uint64(vocab.Fails) && v != uint64(vocab.Unknown) {
			r.fail("row %d: verdict %d", i, v)
		} else {
			row.Verdict = vocab.Verdict(v)
		}
		row.Kind = r.str("row kind")
		if r.err == nil && !vocab.Kind(row.Kind).Valid() {
			r.fail("row %d: kind %q is not a reason kind", i, row.Kind)
		}
		row.Reasons = make([]string, r.alloc(r.count("reasons", 1), uintptr(sizeString), "reasons"))
		for j := range row.Reasons {
			row.Reasons[j] = r.str("reason")
		}
		if r.err == nil && len(row.Reasons) == 0 {
			r.fail("row %d: no reason", i)
		}
		if r.err == nil && i > 0 && compareRows(t.Rows[i-1], *row) >= 0 {
			r.fail("row %d out of order", i)
		}
	}
	n := r.count("sets", 2)
	if r.err == nil && (uint64(n) != sets || n == 0) {
		// No set, no section: the directory says so instead.
		r.fail("%d sets, the directory says %d", n, sets)
	}
	if r.err != nil {
		return nil, r.err
	}
	t.Sets = make([][]uint64, r.alloc(n, uintptr(sizeSlice), "sets"))
	for i := range t.Sets {
		set := make([]uint64, r.alloc(r.count("set rows", 1), 8, "set rows"))
		next := uint64(0) // the least index the next row may have
		for j := range set {
			d := r.uv("set row")
			if r.err == nil && d >= uint64(len(t.Rows))-next {
				r.fail("set %d: row out of range", i)
			}
			if r.err != nil {
				return nil, r.err
			}
			set[j] = next + d
			next = set[j] + 1
			if j > 0 {
				a, b := t.Rows[set[j-1]], t.Rows[set[j]]
				if a.Object == b.Object && a.Program == b.Program {
					r.fail("set %d: two rows for one program", i)
				}
			}
		}
		if r.err == nil && len(set) == 0 {
			r.fail("set %d is empty", i)
		}
		t.Sets[i] = set
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return t, nil
}

// compareRows orders rows by object, program, verdict, kind, then reasons.
func compareRows(a, b RowRecord) int {
	return cmp.Or(
		cmp.Compare(a.Object, b.Object),
		cmp.Compare(a.Program, b.Program),
		cmp.Compare(a.Verdict, b.Verdict),
		cmp.Compare(a.Kind, b.Kind),
		slices.Compare(a.Reasons, b.Reasons),
	)
}

// CompareRows is the order the reader checks rows in, for the encoder.
func CompareRows(a, b RowRecord) int { return compareRows(a, b) }

// Prediction is one row of an entry's verdict set, resolved.
type Prediction struct {
	Object  *ObjectRecord
	Program string
	Verdict vocab.Verdict // vocab.Fails or vocab.Unknown
	Kind    string
	Reasons []string
}

// Predictions returns entry e's verdicts: the programs predicted not to
// load or that may not, sorted by object and program; none when every
// program is predicted to load. It decodes the verdicts section once per
// payload, charging bud the first time; a corrupt one gives an error
// wrapping ErrCorrupt. The result (one Prediction per row of the set, the
// set charged with the table) is the caller's.
func (p *Payload) Predictions(e Entry, bud *Budget) ([]Prediction, error) {
	if e.Verdicts == 0 {
		return nil, nil
	}
	t, err := p.verdictTable(bud)
	if err != nil {
		return nil, err
	}
	if t == nil || e.Verdicts > uint64(len(t.Sets)) {
		// readBlock checked it against the directory, which readVerdicts
		// checked the section against.
		return nil, fmt.Errorf("%w: entry %s: verdict set %d out of range", ErrCorrupt, e.Key, e.Verdicts-1)
	}
	set := t.Sets[e.Verdicts-1]
	out := make([]Prediction, len(set))
	for i, ri := range set {
		row := t.Rows[ri]
		o := &t.Objects[row.Object]
		out[i] = Prediction{Object: o, Program: o.Programs[row.Program], Verdict: row.Verdict, Kind: row.Kind, Reasons: row.Reasons}
	}
	return out, nil
}

// verdictTable decodes the verdicts section, once (section).
func (p *Payload) verdictTable(bud *Budget) (*VerdictTable, error) {
	return section(p, &p.verdicts, p.dir.verdicts, "verdicts", bud, func(raw []byte, bud *Budget) (*VerdictTable, error) {
		return readVerdicts(raw, p.dir.sets, bud)
	})
}

// VerdictsSize is the size of the verdicts section: its frame as stored
// and decompressed; 0 and 0 when there is none.
func (p *Payload) VerdictsSize() (stored, raw uint64) {
	return p.dir.verdicts.n, p.dir.verdicts.raw
}

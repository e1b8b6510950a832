package generator

import (
	"crypto/sha256"
	"hash/maphash"
	"slices"
	"unique"
)

// sharer makes the results a run holds until it encodes the payload and
// writes the report share what repeats between kernels: similar kernels
// mostly minimize to the same BTF and have the same report rows, so a run
// over many holds each distinct blob and row list once, and its memory
// grows with what differs between kernels, not with their number.
// Not safe for concurrent use.
type sharer struct {
	blobs    map[[sha256.Size]byte][]byte
	programs rowLists[ProgramReport]
	relocs   rowLists[RelocationReport]
}

// rowLists are the distinct row lists seen, by a hash of their rows, and
// by the address of their first row: a list that is already shared (read
// from a part, where each distinct list is stored once) is found without
// hashing it again. Lists of one hash are told apart by comparing their
// rows: spelling each list into a string key was a twentieth of what a
// generate run with the big test object allocated. Only the lists kept
// are known by address: the key holds its list alive, and keeping every
// kernel's list that an earlier one replaced made a run's live heap grow
// by about 40 KB per kernel (160 MB at 4,000 kernels).
type rowLists[T any] struct {
	byHash map[uint64][][]T
	at     map[*T][]T
	seed   maphash.Seed
	hash   func(*maphash.Hash, T)
	equal  func(a, b T) bool
	keep   func([]T) // if set, called on each new list before it is kept
}

func newRowLists[T any](hash func(*maphash.Hash, T), equal func(a, b T) bool, keep func([]T)) rowLists[T] {
	return rowLists[T]{byHash: map[uint64][][]T{}, at: map[*T][]T{}, seed: maphash.MakeSeed(), hash: hash, equal: equal, keep: keep}
}

// newSharer returns a sharer; intern says it interns the strings of each
// row list it keeps, as a Generate run's does: lists that differ between
// kernels still share most of their strings. A list an earlier equal one
// replaces is dropped uninterned; interning every kernel's rows as they
// were made was 3 % of a run with the big test object, and most kernels
// of a series repeat an earlier one's rows. Merge's lists come from
// parts, each distinct list once, and are not interned.
func newSharer(intern bool) *sharer {
	var keepPrograms func([]ProgramReport)
	var keepRelocations func([]RelocationReport)
	if intern {
		keepPrograms, keepRelocations = internPrograms, internRelocations
	}
	return &sharer{
		blobs:    map[[sha256.Size]byte][]byte{},
		programs: newRowLists(hashProgram, sameProgram, keepPrograms),
		relocs:   newRowLists(hashRelocation, func(a, b RelocationReport) bool { return a == b }, keepRelocations),
	}
}

// share replaces kr's blobs and report rows by equal ones an earlier
// kernel holds, and drops the per-object rows only the cache needed.
func (s *sharer) share(kr *kernelResult) {
	kr.rows = nil
	kr.entry.VMLinux = s.blob(kr.entry.VMLinux)
	for i := range kr.entry.Modules {
		m := &kr.entry.Modules[i]
		m.Base, m.Split = s.blob(m.Base), s.blob(m.Split)
	}
	r := &kr.report
	r.Programs = s.programs.shared(r.Programs)
	r.Unresolved = s.relocs.shared(r.Unresolved)
	r.KernelTypeIDs = s.relocs.shared(r.KernelTypeIDs)
}

// blob returns b, or an earlier blob of the same bytes. The digest
// stands for the bytes as the key: a string key would copy every
// distinct blob once more.
func (s *sharer) blob(b []byte) []byte {
	if b == nil {
		return nil
	}
	sum := sha256.Sum256(b)
	if old, ok := s.blobs[sum]; ok {
		return old
	}
	s.blobs[sum] = b
	return b
}

// shared returns rows, or an earlier list of equal rows.
func (l rowLists[T]) shared(rows []T) []T {
	if len(rows) == 0 {
		return rows
	}
	if old, ok := l.at[&rows[0]]; ok && len(old) == len(rows) {
		return old
	}
	var h maphash.Hash
	h.SetSeed(l.seed)
	for _, r := range rows {
		l.hash(&h, r)
	}
	sum := h.Sum64()
	if i := slices.IndexFunc(l.byHash[sum], func(old []T) bool { return slices.EqualFunc(old, rows, l.equal) }); i >= 0 {
		return l.byHash[sum][i]
	}
	if l.keep != nil {
		l.keep(rows)
	}
	l.byHash[sum] = append(l.byHash[sum], rows)
	l.at[&rows[0]] = rows
	return rows
}

// sameProgram says two program rows are the same in the report: nil and
// empty Reasons or Guarded, both omitted from the JSON, are.
func sameProgram(a, b ProgramReport) bool {
	return a.Object == b.Object && a.Program == b.Program && a.Verdict == b.Verdict && a.Reason == b.Reason &&
		slices.Equal(a.Reasons, b.Reasons) && slices.Equal(a.Guarded, b.Guarded)
}

// hashProgram and hashRelocation hash what sameProgram and == compare;
// a collision only costs a comparison.
func hashProgram(h *maphash.Hash, p ProgramReport) {
	for _, s := range []string{p.Object, p.Program, p.Verdict, p.Reason} {
		h.WriteString(s)
	}
	for _, s := range p.Reasons {
		h.WriteString(s)
	}
	h.WriteByte(0)
	for _, s := range p.Guarded {
		h.WriteString(s)
	}
}

func hashRelocation(h *maphash.Hash, r RelocationReport) {
	for _, s := range []string{r.Object, r.Section, r.Kind, r.Type, r.Access, r.Status, r.Reason} {
		h.WriteString(s)
	}
	maphash.WriteComparable(h, r.InsnOff)
}

// internPrograms interns the strings of rows in place (a kernel's list,
// made for it alone); Reasons and Guarded become new slices, as the load
// prediction's memo may share theirs between kernels.
func internPrograms(rows []ProgramReport) {
	for i := range rows {
		p := &rows[i]
		for _, f := range []*string{&p.Object, &p.Program, &p.Verdict, &p.Reason} {
			*f = unique.Make(*f).Value()
		}
		p.Reasons, p.Guarded = internAll(p.Reasons), internAll(p.Guarded)
	}
}

// internRelocations interns the strings of rows in place.
func internRelocations(rows []RelocationReport) {
	for i := range rows {
		r := &rows[i]
		for _, f := range []*string{&r.Object, &r.Section, &r.Function, &r.Field, &r.Kind, &r.Type, &r.Access, &r.Status, &r.Reason} {
			*f = unique.Make(*f).Value()
		}
	}
}

// internAll returns ss with every string interned, in a new slice.
func internAll(ss []string) []string {
	if len(ss) == 0 {
		return ss
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = unique.Make(s).Value()
	}
	return out
}

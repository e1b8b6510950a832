package generator

import (
	"crypto/sha256"
	"strconv"
	"strings"
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

// rowLists are the distinct row lists seen, by their spelling, and by
// the address of their first row: a list that is already shared (read
// from a part, where each distinct list is stored once) is found without
// spelling it again.
type rowLists[T any] struct {
	bySpelling map[string][]T
	at         map[*T][]T
}

func newRowLists[T any]() rowLists[T] {
	return rowLists[T]{bySpelling: map[string][]T{}, at: map[*T][]T{}}
}

func newSharer() *sharer {
	return &sharer{
		blobs:    map[[sha256.Size]byte][]byte{},
		programs: newRowLists[ProgramReport](),
		relocs:   newRowLists[RelocationReport](),
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
	r.Programs = shared(s.programs, r.Programs, writeProgram)
	r.Unresolved = shared(s.relocs, r.Unresolved, writeRelocation)
	r.KernelTypeIDs = shared(s.relocs, r.KernelTypeIDs, writeRelocation)
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

// shared returns rows, or an earlier list of equal rows from seen; write
// spells one row unambiguously for the comparison.
func shared[T any](seen rowLists[T], rows []T, write func(*strings.Builder, T)) []T {
	if len(rows) == 0 {
		return rows
	}
	if old, ok := seen.at[&rows[0]]; ok && len(old) == len(rows) {
		return old
	}
	out := spelled(seen.bySpelling, rows, write)
	seen.at[&rows[0]] = out
	return out
}

func spelled[T any](seen map[string][]T, rows []T, write func(*strings.Builder, T)) []T {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(rows)))
	b.WriteByte(0)
	for _, r := range rows {
		write(&b, r)
		b.WriteByte('\x01')
	}
	if old, ok := seen[b.String()]; ok {
		return old
	}
	seen[b.String()] = rows
	return rows
}

func writeProgram(b *strings.Builder, p ProgramReport) {
	for _, s := range []string{p.Object, p.Program, p.Verdict, p.Reason} {
		spell(b, s)
	}
	// Reasons and Guarded are omitempty: nil and empty, both [] here,
	// are the same in the JSON.
	for _, list := range [][]string{p.Reasons, p.Guarded} {
		b.WriteString(strconv.Itoa(len(list)))
		b.WriteByte(';') // a count, where a string's length ends in ':'
		for _, s := range list {
			spell(b, s)
		}
	}
}

// writeRelocation spells a relocation row; its Function and Field follow
// from Object, Section and InsnOff, which name the relocation.
func writeRelocation(b *strings.Builder, r RelocationReport) {
	for _, s := range []string{r.Object, r.Section, strconv.FormatUint(uint64(r.InsnOff), 10), r.Kind, r.Type, r.Access, r.Status, r.Reason} {
		spell(b, s)
	}
}

// spell writes s with its length before it, which tells where it ends
// whatever its bytes: quoting each field with fmt's %q was most of the
// sharing's time on the big test object's 360 rows per kernel.
func spell(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}

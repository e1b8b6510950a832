package rawbtf

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// The essential-name index and the string index are sorted slices of
// hash<<32 | value: a lookup is a binary search on the hash, then a check
// of the real bytes, and an index costs 8 bytes per entry instead of a
// map's allocations.
func packEntry(hash, value uint32) uint64 { return uint64(hash)<<32 | uint64(value) }

// hashRange returns the entries of a sorted index whose hash is h.
func hashRange(index []uint64, h uint32) []uint64 {
	i, _ := slices.BinarySearch(index, packEntry(h, 0))
	j := i
	for j < len(index) && uint32(index[j]>>32) == h {
		j++
	}
	return index[i:j]
}

var nameSeed = maphash.MakeSeed()

func hashName(b []byte) uint32 { return uint32(maphash.Bytes(nameSeed, b)) }

// EssentialName strips a CO-RE flavour suffix: "task_struct___old" is
// "task_struct". A name that starts with "___" is its own essential name.
func EssentialName(name string) string {
	if i := lastFlavourSep([]byte(name)); i > 0 {
		return name[:i]
	}
	return name
}

func lastFlavourSep(b []byte) int {
	if !bytes.Contains(b, []byte("___")) { // cheap common case
		return -1
	}
	return bytes.LastIndex(b, []byte("___"))
}

func essential(b []byte) []byte {
	if i := lastFlavourSep(b); i > 0 {
		return b[:i]
	}
	return b
}

func (s *Spec) buildNames() {
	names := make([]uint64, 0, len(s.offsets)/2)
	for i, off := range s.offsets {
		nameOff := s.u32(s.types[off:])
		if nameOff == 0 {
			continue
		}
		b := s.stringBytes(nameOff)
		if len(b) == 0 {
			continue
		}
		names = append(names, packEntry(hashName(essential(b)), uint32(s.firstID)+uint32(i)))
	}
	slices.Sort(names)
	s.names = names
}

// TypesByEssentialName returns, in ascending order, the IDs of every type
// (of any kind) whose essential name is name; name itself is not stripped
// again. This is the candidate set CO-RE relocation considers for a local
// type named EssentialName(local). For split BTF the base's types come
// first; IDs below FirstID are the base's (a module's own CO-RE candidates
// are only its own types).
func (s *Spec) TypesByEssentialName(name string) []TypeID {
	var ids []TypeID
	if s.base != nil {
		ids = s.base.TypesByEssentialName(name)
	}
	s.namesOnce.Do(s.buildNames)
	want := []byte(name)
	for _, e := range hashRange(s.names, hashName(want)) {
		id := TypeID(uint32(e))
		off := s.offsets[id-s.firstID]
		if bytes.Equal(essential(s.stringBytes(s.u32(s.types[off:]))), want) {
			ids = append(ids, id)
		}
	}
	return ids
}

// LookupEssentialNames returns, for each of names that has any, the IDs of
// this blob's own types (not its base's) whose essential name it is, in
// ascending order. It is one pass over the blob's type names against the
// wanted set, so a caller that knows all the names it will ask for (the
// local types of a set of CO-RE relocations: tens, against a vmlinux's
// ~100,000 named types) never pays for the full index that
// TypesByEssentialName builds. The Spec remembers what each name gave, and
// a later call scans only for names not asked before: a generate run asks
// a kernel for the same names in Match and again in the oracle, and each
// pass over a kernel's names was 3-4 % of the run. The returned slices are
// shared and must not be modified.
func (s *Spec) LookupEssentialNames(names []string) map[string][]TypeID {
	s.lookupMu.Lock()
	defer s.lookupMu.Unlock()
	if s.looked == nil {
		s.looked = make(map[string][]TypeID, len(names))
	}
	var missing []string
	for _, n := range names {
		if _, ok := s.looked[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		found := s.scanEssentialNames(missing)
		for _, n := range missing {
			s.looked[n] = found[n]
		}
	}
	out := make(map[string][]TypeID, len(names))
	for _, n := range names {
		if ids := s.looked[n]; len(ids) > 0 {
			out[n] = ids
		}
	}
	return out
}

// scanEssentialNames is LookupEssentialNames' pass over the type names.
func (s *Spec) scanEssentialNames(names []string) map[string][]TypeID {
	want := make(map[string]bool, len(names))
	var filter nameFilter
	for _, n := range names {
		want[n] = true
		filter.add([]byte(n))
	}
	found := make(map[string][]TypeID)
	for i, off := range s.offsets {
		nameOff := s.u32(s.types[off:])
		if nameOff == 0 {
			continue
		}
		if !filter.mayHave(s.stringPrefix(nameOff)) {
			continue
		}
		b := essential(s.stringBytes(nameOff))
		if want[string(b)] { // no allocation: the conversion is only a key
			found[string(b)] = append(found[string(b)], s.firstID+TypeID(i))
		}
	}
	return found
}

// stringPrefix returns the first two bytes at a valid string offset
// without finding the string's end (a one-byte string comes with its NUL).
func (s *Spec) stringPrefix(off uint32) []byte {
	if off < s.strBase {
		return s.base.stringPrefix(off)
	}
	b := s.strs[off-s.strBase:]
	return b[:min(2, len(b))]
}

// nameFilter rules out most names without hashing them: a bit per
// (first byte, second byte) of the wanted names. A flavoured name
// ("task_struct___old") starts like its essential name, so the filter
// applies before the flavour is stripped.
type nameFilter [1 << 16 / 64]uint64

// filterKey is the first two bytes of a name (a NUL after a one-byte
// name), as stringPrefix returns them.
func filterKey(b []byte) uint16 {
	if len(b) == 1 {
		return uint16(b[0]) << 8
	}
	return uint16(b[0])<<8 | uint16(b[1])
}

func (f *nameFilter) add(b []byte) {
	if len(b) > 0 {
		k := filterKey(b)
		f[k/64] |= 1 << (k % 64)
	}
}

func (f *nameFilter) mayHave(b []byte) bool {
	k := filterKey(b)
	return f[k/64]&(1<<(k%64)) != 0
}

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
		if !filter.mayHave(s.prefixKey(nameOff)) {
			continue
		}
		b := essential(s.stringBytes(nameOff))
		if want[string(b)] { // no allocation: the conversion is only a key
			found[string(b)] = append(found[string(b)], s.firstID+TypeID(i))
		}
	}
	return found
}

// prefixKey is the first four bytes of the string at a valid offset,
// the bytes from its NUL on as zeros, read without finding its end.
func (s *Spec) prefixKey(off uint32) uint32 {
	if off < s.strBase {
		return s.base.prefixKey(off)
	}
	b := s.strs[off-s.strBase:]
	var k uint32
	for i := 0; i < 4 && i < len(b) && b[i] != 0; i++ {
		k |= uint32(b[i]) << (8 * i)
	}
	return k
}

// nameFilter rules out most names without finding their ends or hashing
// them: a bit per hash of the first four bytes (zeros after a shorter
// name) of the wanted names. A flavoured name ("task_struct___old")
// starts like its essential name, so the filter applies before the
// flavour is stripped; an essential name shorter than four bytes is
// added as it ends ("u32" and a NUL) and as a flavoured name begins
// ("u32_"). For a hundred names picked across 6.1.0-47-amd64, the first
// two bytes let 58 % of its names through to be ended, stripped and
// looked up, four bytes 29 %: the scan went from 1.9 to 1.34 ms (go test
// ./internal/rawbtf -bench ScanEssentialNames).
type nameFilter [1 << 16 / 64]uint64

func (f *nameFilter) add(name []byte) {
	if len(name) == 0 {
		return
	}
	f.set(prefixOf(name))
	if len(name) < 4 {
		f.set(prefixOf(append(slices.Clip(name), "___"...)))
	}
}

// prefixOf is prefixKey of a name held apart from a string table.
func prefixOf(name []byte) uint32 {
	var k uint32
	for i := 0; i < 4 && i < len(name); i++ {
		k |= uint32(name[i]) << (8 * i)
	}
	return k
}

func (f *nameFilter) set(k uint32) {
	h := filterHash(k)
	f[h/64] |= 1 << (h % 64)
}

func (f *nameFilter) mayHave(k uint32) bool {
	h := filterHash(k)
	return f[h/64]&(1<<(h%64)) != 0
}

// filterHash spreads a prefix over the filter's bits (Fibonacci hashing).
func filterHash(k uint32) uint32 { return (k * 0x9e3779b1) >> 16 }

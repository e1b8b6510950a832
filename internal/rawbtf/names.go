package rawbtf

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// nameEntry is one row of the essential-name index: the hash of a type's
// essential name and its ID. Rows are sorted, so a lookup is a binary
// search and the index costs 8 bytes per named type instead of a map.
type nameEntry struct {
	hash uint32
	id   TypeID
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
	if bytes.Index(b, []byte("___")) < 0 { // cheap common case
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
	names := make([]nameEntry, 0, len(s.offsets)/2)
	for i, off := range s.offsets {
		nameOff := s.bo.Uint32(s.types[off:])
		if nameOff == 0 {
			continue
		}
		b := s.stringBytes(nameOff)
		if len(b) == 0 {
			continue
		}
		names = append(names, nameEntry{hashName(essential(b)), s.firstID + TypeID(i)})
	}
	slices.SortFunc(names, func(a, b nameEntry) int {
		if a.hash != b.hash {
			if a.hash < b.hash {
				return -1
			}
			return 1
		}
		return int(a.id) - int(b.id)
	})
	s.names = names
}

// TypesByEssentialName returns, in ascending order, the IDs of every type
// (of any kind, the base's included) whose essential name is name; name
// itself is not stripped again. This is the candidate set CO-RE relocation
// considers for a local type named EssentialName(local).
func (s *Spec) TypesByEssentialName(name string) []TypeID {
	var ids []TypeID
	if s.base != nil {
		ids = s.base.TypesByEssentialName(name)
	}
	s.namesOnce.Do(s.buildNames)
	want := []byte(name)
	h := hashName(want)
	i, _ := slices.BinarySearchFunc(s.names, h, func(e nameEntry, h uint32) int {
		switch {
		case e.hash < h:
			return -1
		case e.hash > h:
			return 1
		}
		return 0
	})
	for ; i < len(s.names) && s.names[i].hash == h; i++ {
		id := s.names[i].id
		off := s.offsets[id-s.firstID]
		if bytes.Equal(essential(s.stringBytes(s.bo.Uint32(s.types[off:]))), want) {
			ids = append(ids, id)
		}
	}
	return ids
}

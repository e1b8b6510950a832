package rawbtf

import "fmt"

// CheckSplitNames reports split BTF whose type names point into the base's
// strings anywhere but at the start of one. pahole and libbpf refer to a
// base string only by where it starts, so such a name means the blob is
// not split BTF over this base: standalone BTF, or split BTF over another
// build, which Parse cannot tell from a good one since every offset and
// type ID is in range either way. Standalone BTF has no base and passes.
func (s *Spec) CheckSplitNames() error {
	if s.base == nil {
		return nil
	}
	for i, off := range s.offsets {
		nameOff := s.bo.Uint32(s.types[off:])
		if nameOff == 0 || nameOff >= s.strBase || s.base.stringStart(nameOff) {
			continue
		}
		return fmt.Errorf("type %d: name offset %d falls inside a string of the base: not split BTF over this base",
			s.firstID+TypeID(i), nameOff)
	}
	return nil
}

// stringStart tells whether a valid string offset is where a string
// starts rather than inside one.
func (s *Spec) stringStart(off uint32) bool {
	if off < s.strBase {
		return s.base.stringStart(off)
	}
	rel := off - s.strBase
	return rel == 0 || s.strs[rel-1] == 0
}

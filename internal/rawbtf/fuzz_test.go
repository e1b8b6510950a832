package rawbtf

import (
	"encoding/binary"
	"testing"
)

// FuzzParse checks that Parse never panics and that every accessor of an
// accepted blob stays in bounds.
func FuzzParse(f *testing.F) {
	f.Add(tiny(f, binary.LittleEndian))
	f.Add(tiny(f, binary.BigEndian))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, nil)
		if err != nil {
			return
		}
		for id := TypeID(0); id < s.NextID(); id++ {
			typ, err := s.Type(id)
			if err != nil {
				t.Fatal(err)
			}
			r := typ.Record()
			r.MapRefs(func(id TypeID) TypeID { return id })
			s.TypesByEssentialName(typ.Name)
		}
	})
}

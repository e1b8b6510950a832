package payload

import (
	"errors"
	"testing"
)

// FuzzUnpackBTF feeds mutated packed BTF to the column decoder, which must
// return an error wrapping ErrCorrupt or BTF of the announced length.
func FuzzUnpackBTF(f *testing.F) {
	for _, k := range minBTF(f)[:2] {
		packed, _ := Pack(k.BTF)
		f.Add(packed, len(k.BTF))
	}
	f.Fuzz(func(t *testing.T, packed []byte, rawLen int) {
		if rawLen < 0 || rawLen > 1<<20 {
			return
		}
		raw, err := Unpack(packed, rawLen)
		if err == nil && len(raw) != rawLen {
			t.Fatalf("unpacked %d bytes, announced %d", len(raw), rawLen)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
	})
}

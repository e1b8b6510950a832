package payload

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzVerdicts feeds mutated verdicts sections to their reader: an error
// must wrap ErrCorrupt, and what it accepts must encode back to the same
// bytes (the section has one encoding: rows and sets in order, indices
// in range). The seed is the section of the execsnoop example's payload.
func FuzzVerdicts(f *testing.F) {
	b, err := os.ReadFile("../../examples/execsnoop/kernelbtf_amd64.btfembed")
	if err != nil {
		f.Fatal(err)
	}
	p, err := Open(b)
	if err != nil {
		f.Fatal(err)
	}
	ref := p.dir.verdicts
	raw, err := inflate(nil, p.blocksArea[ref.off:ref.off+ref.n], ref.raw)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw, p.dir.sets)
	f.Fuzz(func(t *testing.T, raw []byte, sets uint64) {
		tab, err := readVerdicts(raw, sets, nil)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if back := tab.marshal(); !bytes.Equal(back, raw) {
			t.Fatalf("accepted %x, which encodes back as %x", raw, back)
		}
	})
}

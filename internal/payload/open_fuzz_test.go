package payload_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// FuzzOpen feeds mutated payloads to Open, Entries, Find, Predictions and
// Blob, below the runtime's BTF parsing so that it runs fast. The checksum is
// recomputed so that mutations reach the directory and block decoders.
// Any error must wrap ErrCorrupt; a panic fails.
func FuzzOpen(f *testing.F) {
	entries := payloadtest.Many(f, payload.BlockLen+2) // two blocks
	for _, opts := range []*encode.Options{nil, {MaxDictSize: 1}, {MaxDictSize: -1}} {
		for _, n := range []int{2, len(entries)} {
			f.Add(payloadtest.Encode(f, entries[:n], opts))
			f.Add(payloadtest.Encode(f, payloadtest.WithVerdicts(entries[:n]), opts))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 16 {
			binary.LittleEndian.PutUint32(b[12:], payload.Checksum(b[16:]))
		}
		p, err := payload.Open(b)
		if err != nil {
			corrupt(t, err)
			return
		}
		bud := payload.NewBudget(0)
		keys, err := p.Keys(bud)
		if err != nil {
			corrupt(t, err)
			return
		}
		for _, k := range keys {
			e, ok, err := p.Find(k, bud)
			if err != nil || !ok || e.Key != k {
				t.Fatalf("Find(%s) = %v, %v, %v", k, e.Key, ok, err)
			}
			if _, err := p.Blob(e.VMLinux, bud); err != nil {
				corrupt(t, err)
			}
			preds, err := p.Predictions(e, bud)
			if err != nil {
				corrupt(t, err)
			}
			for _, pr := range preds {
				if pr.Program == "" || len(pr.Reasons) == 0 || !slices.Contains(pr.Object.Programs, pr.Program) {
					t.Fatalf("%s: prediction %+v", e.Key, pr)
				}
			}
		}
	})
}

func corrupt(t *testing.T, err error) {
	if !errors.Is(err, payload.ErrCorrupt) {
		t.Fatalf("error %v does not wrap ErrCorrupt", err)
	}
}

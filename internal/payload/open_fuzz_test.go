package payload_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
)

// FuzzOpen feeds mutated payloads to Open, Entries, Find and Blob, below
// the runtime's BTF parsing so that it runs fast. The checksum is
// recomputed so that mutations reach the directory and block decoders.
// Any error must wrap ErrCorrupt; a panic fails.
func FuzzOpen(f *testing.F) {
	var entries []encode.Entry
	kernels := kerneltest.MinBTF(f, kerneltest.MinBTFDir())
	for i := range payload.BlockLen + 2 { // two blocks
		k := kernels[i%len(kernels)]
		entries = append(entries, encode.Entry{Key: k.Key, VMLinux: k.BTF})
		entries[i].Key.Release = fmt.Sprintf("%s.%03d", k.Key.Release, i)
	}
	for _, opts := range []*encode.Options{nil, {MaxDictSize: 1}, {MaxDictSize: -1}} {
		for _, n := range []int{2, len(entries)} {
			var buf bytes.Buffer
			if err := encode.Write(&buf, entries[:n], opts); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
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
		all, err := p.Entries()
		if err != nil {
			corrupt(t, err)
			return
		}
		for _, e := range all {
			if got, ok, err := p.Find(e.Key); err != nil || !ok || got.Key != e.Key {
				t.Fatalf("Find(%s) = %v, %v, %v", e.Key, got.Key, ok, err)
			}
			if _, err := p.Blob(e.VMLinux); err != nil {
				corrupt(t, err)
			}
		}
	})
}

func corrupt(t *testing.T, err error) {
	if !errors.Is(err, payload.ErrCorrupt) {
		t.Fatalf("error %v does not wrap ErrCorrupt", err)
	}
}

package runtime

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzOpen feeds mutated payloads to Open and Lookup. The checksum is
// recomputed first so that mutations reach the index and blob decoders
// instead of stopping at the CRC.
func FuzzOpen(f *testing.F) {
	f.Add(encode(f, testEntries(f)[:2], nil))
	f.Add(encode(f, testEntries(f)[:1], &EncodeOptions{MaxDictSize: -1}))
	f.Add(encode(f, []Entry{moduleEntry(f, false)}, nil))
	// Small dictionaries: slices, differences, and a dictionary stored
	// against another.
	m := moduleEntry(f, true).Modules[0]
	f.Add(encode(f, append(slices.Clone(testEntries(f)[:2]), Entry{Key: Key{Arch: "x86_64", Release: "zz"}, VMLinux: m.Base}), &EncodeOptions{MaxDictSize: 1}))
	f.Fuzz(func(t *testing.T, p []byte) {
		resum(p)
		exercise(t, p)
	})
}

// FuzzUnpackBTF feeds mutated packed BTF to the column decoder, which must
// return an error or BTF of the announced length, and agree with the
// streaming reader.
func FuzzUnpackBTF(f *testing.F) {
	for _, e := range testEntries(f)[:2] {
		packed, _ := packBTF(e.VMLinux)
		f.Add(packed, len(e.VMLinux))
	}
	f.Fuzz(func(t *testing.T, packed []byte, rawLen int) {
		if rawLen < 0 || rawLen > 1<<20 {
			return
		}
		raw, err := unpackBTF(packed, rawLen)
		if err == nil && len(raw) != rawLen {
			t.Fatalf("unpacked %d bytes, announced %d", len(raw), rawLen)
		}
		read, rerr := readAll(packed, rawLen)
		if (err == nil) != (rerr == nil) || err == nil && !bytes.Equal(read, raw) {
			t.Fatalf("reader and unpackBTF disagree: %v, %v", rerr, err)
		}
	})
}

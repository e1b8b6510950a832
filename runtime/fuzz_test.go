package runtime

import (
	"slices"
	"testing"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// FuzzOpen feeds mutated payloads to Open and Lookup: errors must wrap
// ErrCorrupt, and whatever Lookup hands out must decode in cilium/ebpf
// (exercise). The checksum is recomputed first so that mutations reach
// the index and blob decoders instead of stopping at the CRC.
func FuzzOpen(f *testing.F) {
	f.Add(payloadtest.Encode(f, payloadtest.Entries(f)[:2], nil))
	f.Add(payloadtest.Encode(f, payloadtest.Entries(f)[:1], &encode.Options{MaxDictSize: -1}))
	f.Add(payloadtest.Encode(f, []encode.Entry{moduleEntry(f, false)}, nil))
	// Small dictionaries: slices, differences, and a dictionary stored
	// against another.
	m := moduleEntry(f, true).Modules[0]
	f.Add(payloadtest.Encode(f, append(slices.Clone(payloadtest.Entries(f)[:2]), encode.Entry{Key: Key{Arch: "x86_64", Release: "zz"}, VMLinux: m.Base}), &encode.Options{MaxDictSize: 1}))
	// Issue 18's amplification, small: modules naming one blob.
	f.Add(payloadtest.Amplification(f, Key{Arch: "x86_64", Release: "amplified"}, 4, 1<<12))
	// BTF stored as it is, neither compressed nor packed, so that
	// mutations reach cilium/ebpf's decoder (issue 33).
	var keys []Key
	var blobs [][]byte
	for _, e := range payloadtest.Entries(f)[:2] {
		keys, blobs = append(keys, e.Key), append(blobs, e.VMLinux)
	}
	f.Add(payloadtest.Stored(f, keys, blobs))
	f.Fuzz(func(t *testing.T, p []byte) {
		resum(p)
		exercise(t, p)
	})
}

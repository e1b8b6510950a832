package encode

import (
	"io"
	"testing"
)

// BenchmarkPayloadSize reports the payload size for the -minbtf kernels
// under several encodings next to the sum of the raw files, a solid
// `tar | xz -9` of them and BTFHub-style per-kernel .btf.tar.xz files
// (when xz is installed). It measures bytes, not time.
func BenchmarkPayloadSize(b *testing.B) {
	entries := testEntries(b)
	raw := 0
	var single [][]Entry
	for _, e := range entries {
		raw += len(e.VMLinux)
		single = append(single, []Entry{e})
	}
	metrics := map[string]int{"kernels": len(entries), "raw-bytes": raw}
	if solid, ok := tarXZ(b, [][]Entry{entries}); ok {
		metrics["tar-xz9-bytes"] = solid
		metrics["per-kernel-tar-xz9-bytes"], _ = tarXZ(b, single)
	}
	for name, opts := range map[string]*Options{
		"zstd-per-blob":        {MaxDictSize: -1, noPack: true},
		"zstd-dict":            {noPack: true},
		"packed-zstd-per-blob": {MaxDictSize: -1},
		"payload":              nil,
	} {
		metrics[name+"-bytes"] = len(encodePayload(b, entries, opts))
	}
	for b.Loop() {
	}
	for unit, v := range metrics {
		b.ReportMetric(float64(v), unit)
	}
}

// BenchmarkEncode is the generator's last step for the -minbtf kernels.
func BenchmarkEncode(b *testing.B) {
	entries := testEntries(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, entries, nil); err != nil {
			b.Fatal(err)
		}
	}
}

package encode_test

import (
	"io"
	"testing"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// BenchmarkPayloadSize reports the payload size for the -minbtf kernels
// under several encodings next to the sum of the raw files, a solid
// `tar | xz -9` of them and BTFHub-style per-kernel .btf.tar.xz files
// (when xz is installed). It measures bytes, not time.
func BenchmarkPayloadSize(b *testing.B) {
	entries := payloadtest.Entries(b)
	raw := 0
	var single [][]encode.Entry
	for _, e := range entries {
		raw += len(e.VMLinux)
		single = append(single, []encode.Entry{e})
	}
	metrics := map[string]int{"kernels": len(entries), "raw-bytes": raw}
	if solid, ok := tarXZ(b, [][]encode.Entry{entries}); ok {
		metrics["tar-xz9-bytes"] = solid
		metrics["per-kernel-tar-xz9-bytes"], _ = tarXZ(b, single)
	}
	for name, opts := range map[string]*encode.Options{
		"zstd-per-blob":        encode.WithoutPacking(encode.Options{MaxDictSize: -1}),
		"zstd-dict":            encode.WithoutPacking(encode.Options{}),
		"packed-zstd-per-blob": {MaxDictSize: -1},
		"payload":              nil,
	} {
		metrics[name+"-bytes"] = len(payloadtest.Encode(b, entries, opts))
	}
	for b.Loop() {
	}
	for unit, v := range metrics {
		b.ReportMetric(float64(v), unit)
	}
}

// BenchmarkEncode is the generator's last step for the -minbtf kernels.
func BenchmarkEncode(b *testing.B) {
	entries := payloadtest.Entries(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := encode.Write(io.Discard, &encode.Payload{Entries: entries}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

package payload

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// packable lists real BTF the column transform must reverse exactly:
// minimized and full vmlinux of every testdata kernel, the running
// kernel's (DECL_TAG, TYPE_TAG).
func packable(t *testing.T) map[string][]byte {
	t.Helper()
	blobs := map[string][]byte{}
	for _, k := range minBTF(t) {
		blobs["min "+k.Key.String()] = k.BTF
	}
	for _, k := range kerneltest.Corpus(t) {
		blobs["full "+k.Name] = k.BTF
	}
	if raw, err := os.ReadFile("/sys/kernel/btf/vmlinux"); err == nil {
		blobs["running"] = raw
	}
	return blobs
}

func TestPackRoundTrip(t *testing.T) {
	for name, raw := range packable(t) {
		t.Run(name, func(t *testing.T) {
			packed, ok := Pack(raw)
			if !ok {
				t.Fatal("transform does not apply")
			}
			back, err := Unpack(packed, len(raw))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, raw) {
				t.Fatal("unpacked bytes differ from the original")
			}
		})
	}
}

// TestPackMakesKernelsAlike checks the point of the transform: two
// different kernels' minimized BTF share more after packing, measured as
// the zstd size of one given the other as dictionary.
func TestPackMakesKernelsAlike(t *testing.T) {
	entries := minBTF(t)
	a, b := entries[0].BTF, entries[len(entries)-1].BTF
	pa, _ := Pack(a)
	pb, _ := Pack(b)
	delta := func(dict, in []byte) int {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderDictRaw(1, dict))
		if err != nil {
			t.Fatal(err)
		}
		defer enc.Close()
		return len(enc.EncodeAll(in, nil))
	}
	raw, packed := delta(a, b), delta(pa, pb)
	t.Logf("%s given %s: raw %d bytes, packed %d bytes", entries[len(entries)-1].Key, entries[0].Key, raw, packed)
	if packed >= raw {
		t.Errorf("packing does not help: %d >= %d bytes", packed, raw)
	}
}

func TestPackDeclines(t *testing.T) {
	raw := minBTF(t)[0].BTF
	bigEndian := bytes.Clone(raw)
	bigEndian[0], bigEndian[1] = bigEndian[1], bigEndian[0]
	badKind := bytes.Clone(raw)
	badKind[rawbtf.HeaderLen+7] = 0x1f // first type's kind
	// pahole's split BTF for a module, with the 32-byte header.
	testmod, err := os.ReadFile(filepath.Join(kerneltest.CiliumTestdata(t), "btf_testmod.btf"))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"32-byte header": testmod,
		"empty":          nil,
		"truncated":      raw[:len(raw)-1],
		"big endian":     bigEndian,
		"bad kind":       badKind,
		"trailing":       append(bytes.Clone(raw), 0),
	} {
		if _, ok := Pack(in); ok {
			t.Errorf("%s: transform applied", name)
		}
	}
}

// minBTF is the minimized BTF of the testdata kernels.
func minBTF(tb testing.TB) []kerneltest.MinKernel {
	tb.Helper()
	return kerneltest.MinBTF(tb, kerneltest.MinBTFDir())
}

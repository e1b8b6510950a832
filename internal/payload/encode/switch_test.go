package encode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestEncoderSwitch holds what the one encoder of a Write relies on: its
// frames without a dictionary (the empty dictionary numbered 0) and with
// each dictionary it switches to are byte for byte those of a fresh
// encoder at the same settings, with or without that dictionary, through
// EncodeAll, whichever order the switches come in.
func TestEncoderSwitch(t *testing.T) {
	paths, err := filepath.Glob("../../../testdata/minbtf/debian/12/*/*.btf")
	if err != nil || len(paths) < 2 {
		t.Fatalf("want the testdata's minimized BTF: %v", err)
	}
	var blobs [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, b)
	}
	fresh := func(id uint32, dict, src []byte) []byte {
		opts := settings()
		if dict != nil {
			opts = append(opts, zstd.WithEncoderDictRaw(id, dict))
		}
		enc, err := zstd.NewWriter(nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer enc.Close()
		return enc.EncodeAll(src, nil)
	}
	enc, err := newEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.close()
	// No dictionary, then each blob as the dictionary of the next, then
	// back to none and to the first dictionary.
	type step struct {
		id        uint32
		dict, src []byte
	}
	var steps []step
	for i, src := range blobs {
		steps = append(steps, step{0, nil, src})
		if i > 0 {
			steps = append(steps, step{uint32(i), blobs[i-1], src})
		}
	}
	steps = append(steps, step{0, nil, blobs[0]}, step{1, blobs[0], blobs[1]})
	for i, s := range steps {
		got, err := enc.with(s.id, s.dict, s.src)
		if err != nil {
			t.Fatal(err)
		}
		if want := fresh(s.id, s.dict, s.src); !bytes.Equal(got, want) {
			t.Errorf("step %d (dictionary %d): %d bytes, a fresh encoder's %d", i, s.id, len(got), len(want))
		}
	}
}

package encode

import (
	"bytes"
	stdflate "compress/flate"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/flate"
)

// TestEncoderSwitch holds what the one encoder of a Write relies on: its
// streams without a dictionary and with each dictionary it switches to
// are byte for byte those of a fresh compressor at the same level, with
// or without that dictionary, whichever order the switches come in; and
// the standard library's compress/flate, the agents' decoder, reads each
// back with that dictionary.
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
	fresh := func(dict, src []byte) []byte {
		var out bytes.Buffer
		w, err := flate.NewWriterDict(&out, flate.BestCompression, dict)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(src); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	enc, err := newEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.close()
	// No dictionary, then each blob as the dictionary of the next, then
	// back to none and to the first dictionary.
	type step struct{ dict, src []byte }
	var steps []step
	for i, src := range blobs {
		steps = append(steps, step{nil, src})
		if i > 0 {
			steps = append(steps, step{blobs[i-1], src})
		}
	}
	steps = append(steps, step{nil, blobs[0]}, step{blobs[0], blobs[1]})
	for i, s := range steps {
		got, err := enc.with(s.dict, s.src)
		if err != nil {
			t.Fatal(err)
		}
		if want := fresh(s.dict, s.src); !bytes.Equal(got, want) {
			t.Errorf("step %d: %d bytes, a fresh compressor's %d", i, len(got), len(want))
		}
		back, err := io.ReadAll(stdflate.NewReaderDict(bytes.NewReader(got), s.dict))
		if err != nil || !bytes.Equal(back, s.src) {
			t.Errorf("step %d: compress/flate reads back %d bytes of %d: %v", i, len(back), len(s.src), err)
		}
	}
	// The compressor, left with a dictionary, serves the next Write as a
	// fresh one does.
	next := reuse(enc.w)
	for _, src := range blobs {
		got, err := next.with(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		if want := fresh(nil, src); !bytes.Equal(got, want) {
			t.Errorf("reused compressor: %d bytes, a fresh compressor's %d", len(got), len(want))
		}
	}
}

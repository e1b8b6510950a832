package payload

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// readAll reads raw BTF through unpackReader the way cilium/ebpf does.
func readAll(packed []byte, rawLen int) ([]byte, error) {
	r, err := newUnpackReader(packed, rawLen)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.NewSectionReader(r, 0, math.MaxInt64))
}

func TestUnpackReader(t *testing.T) {
	for name, raw := range packable(t) {
		packed, _ := Pack(raw)
		got, err := readAll(packed, len(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, raw) {
			t.Fatalf("%s: read bytes differ from the original", name)
		}
	}

	raw := minBTF(t)[0].BTF
	packed, _ := Pack(raw)
	r, err := newUnpackReader(packed, len(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(make([]byte, 8), 100); err == nil {
		t.Error("read out of sequence: no error")
	}
	truncated := packed[:len(packed)-1]
	if _, err := readAll(truncated, len(raw)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated packed BTF: error %v, want ErrCorrupt", err)
	}
}

func TestUnpackRejects(t *testing.T) {
	raw := minBTF(t)[0].BTF
	packed, _ := Pack(raw)
	for name, c := range map[string]struct {
		packed []byte
		rawLen int
	}{
		"wrong length": {packed, len(raw) + 1},
		"truncated":    {packed[:len(packed)-1], len(raw)},
		"trailing":     {append(bytes.Clone(packed), 0), len(raw)},
		"header only":  {packed[:rawbtf.HeaderLen], len(raw)},
		"empty":        {nil, len(raw)},
	} {
		if _, err := Unpack(c.packed, c.rawLen); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

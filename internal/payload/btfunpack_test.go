package payload

import (
	"bytes"
	"testing"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

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

package payload_test

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// TestOpenVersionNoVerdicts reads a payload of the format before verdicts
// (the execsnoop example's amd64 payload as it was committed): its
// entries and BTF decode, and it predicts nothing.
func TestOpenVersionNoVerdicts(t *testing.T) {
	b, err := os.ReadFile("testdata/v2-execsnoop-amd64.btfembed")
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != payload.VersionNoVerdicts {
		t.Fatalf("test payload is of version %d", v)
	}
	p, err := payload.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Predicted() {
		t.Error("a version 2 payload says it predicts")
	}
	all, err := p.Entries(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("%d entries, want the 3 x86_64 kernels", len(all))
	}
	for _, e := range all {
		if _, err := p.Blob(e.VMLinux, nil); err != nil {
			t.Errorf("%s: %v", e.Key, err)
		}
		if preds, err := p.Predictions(e, nil); err != nil || preds != nil {
			t.Errorf("%s: predictions %v, %v", e.Key, preds, err)
		}
	}
}

// TestOpenVersions: versions other than 2 and 3 are refused as corrupt,
// naming the version.
func TestOpenVersions(t *testing.T) {
	good := payloadtest.Encode(t, payloadtest.WithVerdicts(payloadtest.Entries(t)), nil)
	for _, v := range []uint32{0, 1, 4, 0xffffffff} {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[8:], v)
		binary.LittleEndian.PutUint32(b[12:], payload.Checksum(b[16:]))
		if _, err := payload.Open(b); !errors.Is(err, payload.ErrCorrupt) {
			t.Errorf("version %d: error %v, want ErrCorrupt", v, err)
		}
	}
	// A version 3 payload read as version 2 is corrupt, not misread.
	b := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(b[8:], payload.VersionNoVerdicts)
	binary.LittleEndian.PutUint32(b[12:], payload.Checksum(b[16:]))
	p, err := payload.Open(b)
	if err == nil {
		_, err = p.Entries(nil)
	}
	if !errors.Is(err, payload.ErrCorrupt) {
		t.Errorf("version 3 bytes read as version 2: %v, want ErrCorrupt", err)
	}
}

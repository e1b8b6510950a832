package payload_test

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// TestOpenOlderVersions: payloads of formats 2 and 3 (zstd; the
// execsnoop example's amd64 payload as each was committed) are refused
// with an error that says to run go generate.
func TestOpenOlderVersions(t *testing.T) {
	for v, path := range map[uint32]string{2: "testdata/v2-execsnoop-amd64.btfembed", 3: "testdata/v3-execsnoop-amd64.btfembed"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := binary.LittleEndian.Uint32(b[8:]); got != v {
			t.Fatalf("%s is of version %d", path, got)
		}
		_, err = payload.Open(b)
		if !errors.Is(err, payload.ErrCorrupt) || !strings.Contains(err.Error(), "run go generate") {
			t.Errorf("%s: error %v, want one saying to run go generate", path, err)
		}
	}
}

// TestOpenVersion4: a payload of format 4, the execsnoop example's amd64
// payload as it was committed, still opens and serves its kernels and
// verdicts; it records no objects and no families, which format 5 added.
func TestOpenVersion4(t *testing.T) {
	b, err := os.ReadFile("testdata/v4-execsnoop-amd64.btfembed")
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(b[8:]); got != 4 {
		t.Fatalf("the payload is of version %d", got)
	}
	p, err := payload.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := payloadtest.All(p, nil)
	if err != nil || len(entries) != 3 {
		t.Fatalf("%d entries, %v; want 3", len(entries), err)
	}
	withVerdicts := 0
	for _, e := range entries {
		if _, err := p.Blob(e.VMLinux, nil); err != nil {
			t.Fatalf("%s: %v", e.Key, err)
		}
		preds, err := p.Predictions(e, nil)
		if err != nil {
			t.Fatalf("%s: %v", e.Key, err)
		}
		if len(preds) > 0 {
			withVerdicts++
		}
	}
	objects, err := p.Objects(nil)
	if err != nil || objects != nil {
		t.Errorf("objects %v, %v; want none", objects, err)
	}
	families, err := p.Families(nil)
	if err != nil || families != nil {
		t.Errorf("families %v, %v; want none", families, err)
	}
	if withVerdicts == 0 {
		t.Error("no entry has verdicts")
	}
}

// TestOpenVersions: versions other than 2 to 5 are refused as corrupt,
// naming the version.
func TestOpenVersions(t *testing.T) {
	good := payloadtest.Encode(t, payloadtest.WithVerdicts(payloadtest.Entries(t)), nil)
	for _, v := range []uint32{0, 1, 6, 0xffffffff} {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[8:], v)
		binary.LittleEndian.PutUint32(b[12:], payload.Checksum(b[16:]))
		if _, err := payload.Open(b); !errors.Is(err, payload.ErrCorrupt) {
			t.Errorf("version %d: error %v, want ErrCorrupt", v, err)
		}
	}
}

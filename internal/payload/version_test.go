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

// TestOpenVersions: versions other than 2, 3 and 4 are refused as
// corrupt, naming the version.
func TestOpenVersions(t *testing.T) {
	good := payloadtest.Encode(t, payloadtest.WithVerdicts(payloadtest.Entries(t)), nil)
	for _, v := range []uint32{0, 1, 5, 0xffffffff} {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[8:], v)
		binary.LittleEndian.PutUint32(b[12:], payload.Checksum(b[16:]))
		if _, err := payload.Open(b); !errors.Is(err, payload.ErrCorrupt) {
			t.Errorf("version %d: error %v, want ErrCorrupt", v, err)
		}
	}
}

package extract

import (
	"bytes"
	"debug/elf"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestLZOFixture decodes a module compressed with lzop -9 (committed, as CI
// may lack lzop) and compares it with the module.
func TestLZOFixture(t *testing.T) {
	lzo, err := os.ReadFile("testdata/virtio_net.ko.lzo")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(kerneltest.Dir(), "corpus-extra/debian/12/arm64/6.1.0-57-arm64.modules/virtio_net.ko"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := decompressT(lzo, SniffCompression(lzo))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("decoded %d bytes differ from the %d-byte module", len(got), len(want))
	}
}

// TestLZOWithLzop round-trips inputs of several shapes through the lzop
// command at both its fast and its best level.
func TestLZOWithLzop(t *testing.T) {
	if _, err := exec.LookPath("lzop"); err != nil {
		t.Skip("lzop not installed")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	inputs := map[string][]byte{
		"kernel BTF": kerneltest.ByName(t, "6.1.0-50-cloud-amd64").BTF[:1<<20],
		"random":     random,
		"zeros":      make([]byte, 1<<20),
		"short":      []byte("abc"),
		"empty":      nil,
		"vmlinux":    extracttest.VMLinuxELF(t, elf.EM_X86_64),
		"repeats":    bytes.Repeat([]byte("0123456789abcdefghij"), 20000),
	}
	for name, in := range inputs {
		for _, level := range []string{"-1", "-9"} {
			t.Run(name+level, func(t *testing.T) {
				cmd := exec.Command("lzop", level, "-c")
				cmd.Stdin = bytes.NewReader(in)
				lzo, err := cmd.Output()
				if err != nil {
					t.Fatal(err)
				}
				got, err := decompressT(lzo, FormatLZO)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, in) {
					t.Fatalf("decoded %d bytes, differ from the %d input bytes", len(got), len(in))
				}
			})
		}
	}
}

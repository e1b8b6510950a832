package distill

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

const nvmeKo = "testdata/nvme-6.12.118+deb12-amd64.ko.xz"

// unxzFile returns a committed module decompressed.
func unxzFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := xz.NewReader(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadModule(t *testing.T) {
	compressed, err := os.ReadFile(nvmeKo)
	if err != nil {
		t.Fatal(err)
	}
	elfData := unxzFile(t, nvmeKo)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(elfData)
	zw.Close()
	zst, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	selfData, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}

	want, err := ReadModule(elfData)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rawbtf.Parse(want.BTF, kernelFor(t, "6.12.118+deb12-amd64").raw); err != nil {
		t.Fatalf(".BTF is not split BTF over its vmlinux: %v", err)
	}
	if want.Base != nil {
		t.Fatalf("Debian's nvme has a .BTF.base of %d bytes", len(want.Base))
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr error // nil: want the same BTF
	}{
		{"elf", elfData, nil},
		{"xz", compressed, nil},
		{"gzip", gz.Bytes(), nil},
		{"zstd", zst.EncodeAll(elfData, nil), nil},
		{"no .BTF", selfData, ErrNoBTF},
		{"truncated elf", elfData[:len(elfData)/3], errAny},
		{"truncated xz", compressed[:len(compressed)/2], errAny},
		{"not elf", []byte("hello, world"), errAny},
		{"empty", nil, errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ReadModule(tc.data)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatal(err)
			case tc.wantErr == nil && !bytes.Equal(m.BTF, want.BTF):
				t.Fatal(".BTF differs from the uncompressed module's")
			case tc.wantErr == errAny && err == nil:
				t.Fatal("no error")
			case tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}

var errAny = errors.New("any error")

// TestReadModuleBase builds a module the way pahole 1.28 does for
// out-of-tree modules, .BTF over a distilled .BTF.base, with objcopy, and
// reads both sections back.
func TestReadModuleBase(t *testing.T) {
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		t.Skip("objcopy not installed")
	}
	dir := t.TempDir()
	ko := filepath.Join(dir, "nvme.ko")
	if err := os.WriteFile(ko, unxzFile(t, nvmeKo), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "nvme-distilled.ko")
	cmd := exec.Command(objcopy, "--update-section", ".BTF="+seedSplit, "--add-section", ".BTF.base="+seedBase, ko, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadModule(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		got  []byte
		path string
	}{{m.BTF, seedSplit}, {m.Base, seedBase}} {
		want, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.got, want) {
			t.Errorf("section read back differs from %s", f.path)
		}
	}
}

package corpus

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/runtime/kernelkey"
)

func TestImportDebSynthetic(t *testing.T) {
	deb := filepath.Join(t.TempDir(), "linux-image.deb")
	writeFile(t, deb, makeDeb(t))
	out := t.TempDir()
	res, err := Import(t.Context(), out, []string{deb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := kernelkey.Key{Arch: "arm64", Release: "6.99.0-7-test", Distro: "debian", Version: "12"}
	if len(res.Kernels) != 1 || res.Kernels[0].Key != want || res.Kernels[0].Modules != 1 {
		t.Fatalf("imported %+v, want %v with one module", res.Kernels, want)
	}
	if len(res.Skipped) != 1 || !errors.Is(res.Skipped[0], ErrNoBase) || !strings.Contains(res.Skipped[0].Error(), deb+":lib/modules/6.99.0-7-other") {
		t.Errorf("skipped %v, want the modules of 6.99.0-7-other without base", res.Skipped)
	}
	k := readBack(t, out)[want]
	if k == nil || !bytes.Equal(k.VMLinux, smallBTF(t)) || len(k.Modules) != 1 ||
		k.Modules[0].Name != "nf_conntrack" || !bytes.Equal(k.Modules[0].BTF, splitBTF(t)) {
		t.Fatalf("read back %+v", k)
	}
}

func TestReadDebErrors(t *testing.T) {
	good := makeDeb(t)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"not ar", []byte("hello"), "not an ar archive"},
		{"truncated", good[:len(good)/2], "unexpected EOF"},
		{"bad header", append([]byte(arMagic), bytes.Repeat([]byte("x"), 60)...), "bad member header"},
		{"no data", arFile(elfSec{"debian-binary", []byte("2.0\n")}), "package without data.tar"},
		{"data not compressed as named", arFile(elfSec{"data.tar.xz", []byte("plain")}), "xz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readDeb(bytes.NewReader(tt.data), 2)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

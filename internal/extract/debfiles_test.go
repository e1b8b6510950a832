package extract

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

func TestDebFiles(t *testing.T) {
	deb := extracttest.MakeDeb(t)
	var got []string
	err := DebFiles(bytes.NewReader(deb), func(p string) bool {
		return strings.HasPrefix(p, "boot/")
	}, func(p string, data []byte) error {
		got = append(got, p)
		if p == "boot/config-6.99.0-7-test" && string(data) != "CONFIG_DEBUG_INFO_BTF=y\n" {
			t.Errorf("%s: %q", p, data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"boot/vmlinuz-6.99.0-7-test", "boot/config-6.99.0-7-test"}; !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}

	stop := errors.New("stop")
	err = DebFiles(bytes.NewReader(deb), func(string) bool { return true }, func(string, []byte) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("callback error %v, want %v", err, stop)
	}
	noData := extracttest.ArFile(extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")})
	if err := DebFiles(bytes.NewReader(noData), func(string) bool { return true }, nil); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("package without data.tar: %v", err)
	}
}

package extract

import (
	"bytes"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

func TestReadDebErrors(t *testing.T) {
	good := extracttest.MakeDeb(t)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"not ar", []byte("hello"), "not an ar archive"},
		{"truncated", good[:len(good)/2], "unexpected EOF"},
		{"bad header", append([]byte(ArMagic), bytes.Repeat([]byte("x"), 60)...), "bad member header"},
		{"no data", extracttest.ArFile(extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")}), "package without data.tar"},
		{"data not compressed as named", extracttest.ArFile(extracttest.Section{Name: "data.tar.xz", Data: []byte("plain")}), "xz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadDeb(bytes.NewReader(tt.data), 2)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

package pathelem

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"6.1.0-47-amd64", true},
		{"6.12.118+deb12-amd64", true},
		{"5.15.0~rc1_x", true},
		{"x86_64", true},
		{"22.04", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../etc", false},
		{"a/b", false},
		{`a\b`, false},
		{"a b", false},
		{"a\x00", false},
		{"é", false},
		{strings.Repeat("a", MaxLen), true},
		// A release of 3,000 bytes failed an import's write with "file
		// name too long".
		{strings.Repeat("a", MaxLen+1), false},
		{strings.Repeat("a", 3000), false},
	}
	for _, tt := range tests {
		err := Validate(tt.in)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrUnsafe) {
			t.Errorf("Validate(%.50q) = %.200v, want ok=%v", tt.in, err, tt.ok)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("Validate(%.50q): error of %d bytes quotes all of it", tt.in, len(err.Error()))
		}
	}
}

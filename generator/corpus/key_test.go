package corpus

import "testing"

func TestKeyString(t *testing.T) {
	tests := []struct {
		key  Key
		want string
	}{
		{Key{"x86_64", "6.1.0-47-amd64", "debian", "12"}, "debian/12/x86_64/6.1.0-47-amd64"},
		{Key{Arch: "arm64", Release: "6.7.0"}, "unknown/unknown/arm64/6.7.0"},
	}
	for _, tt := range tests {
		if got := tt.key.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.key, got, tt.want)
		}
	}
}

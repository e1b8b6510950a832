package osrelease

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, id, version string
		idLike          []string
	}{
		{"ID=debian\nVERSION_ID=\"12\"\n", "debian", "12", nil},
		{"NAME=\"Amazon Linux\"\nID=\"amzn\"\nVERSION_ID=\"2\"\nID_LIKE=\"centos rhel fedora\"\n", "amzn", "2", []string{"centos", "rhel", "fedora"}},
		{"ID=arch\nBUILD_ID=rolling\n", "arch", "", nil},
		{"  ID='opensuse-leap'  \n# comment\nVERSION_ID=15.5", "opensuse-leap", "15.5", nil},
		{"garbage\n=\nID=\"unterminated\n", "\"unterminated", "", nil},
	} {
		r := Parse([]byte(c.in))
		if r.ID != c.id || r.VersionID != c.version || !slices.Equal(r.IDLike, c.idLike) {
			t.Errorf("Parse(%q) = %+v, want %q, %q, %q", c.in, r, c.id, c.version, c.idLike)
		}
	}
}

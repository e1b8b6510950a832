package extracttest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// DpkgDeb builds a Debian package with dpkg-deb (deb(5)), its control.tar
// and data.tar compressed as compression says (dpkg-deb -Z: gzip, xz,
// zstd, none), around the control file given and the files, named by
// their install path ("usr/lib/debug/boot/vmlinux-6.1.0-7-amd64"). It
// skips the test, saying so, where dpkg-deb is not installed.
func DpkgDeb(tb testing.TB, control, compression string, files ...Section) []byte {
	tb.Helper()
	dpkgDeb, err := exec.LookPath("dpkg-deb")
	if err != nil {
		tb.Skip("dpkg-deb not installed (Debian package dpkg): .deb fixtures cannot be built")
	}
	top := tb.TempDir()
	root := filepath.Join(top, "root")
	for _, f := range append([]Section{{Name: "DEBIAN/control", Data: []byte(control)}}, files...) {
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	deb := filepath.Join(top, "p.deb")
	cmd := exec.Command(dpkgDeb, "--root-owner-group", "-Z"+compression, "--build", root, deb)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("dpkg-deb: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(deb)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// ArMembers splits an ar archive (the common format of deb(5): the magic,
// then per member a 60-byte header with its name in the first 16 bytes
// and its decimal size at byte 48, the data and a padding byte to even
// length) into its members, for a test to change one and join them
// again with ArFile.
func ArMembers(tb testing.TB, ar []byte) []Section {
	tb.Helper()
	const magic = "!<arch>\n"
	if !bytes.HasPrefix(ar, []byte(magic)) {
		tb.Fatal("not an ar archive")
	}
	var members []Section
	for rest := ar[len(magic):]; len(rest) > 0; {
		if len(rest) < 60 {
			tb.Fatalf("ar: truncated header")
		}
		name := string(bytes.TrimRight(bytes.TrimRight(rest[:16], " "), "/"))
		size, err := strconv.Atoi(string(bytes.TrimSpace(rest[48:58])))
		if err != nil || size > len(rest)-60 {
			tb.Fatalf("ar: member %s: size %q", name, rest[48:58])
		}
		members = append(members, Section{Name: name, Data: bytes.Clone(rest[60 : 60+size])})
		rest = rest[60+size+size%2:]
	}
	return members
}

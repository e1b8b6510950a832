package tarfile

import (
	"archive/tar"
	"fmt"
	"strings"
	"testing"
)

// FuzzReader: whatever the bytes, the reader does not panic, and where
// both it and archive/tar read a whole archive, they read the same members.
// archive/tar is the reference this package replaces (see doc.go); the
// seeds are archives it writes in each format.
func FuzzReader(f *testing.F) {
	long := "lib/modules/6.1.0-47-amd64/kernel/" + strings.Repeat("dir/", 30) + "m.ko"
	headers := []tar.Header{
		{Typeflag: tar.TypeDir, Name: "./boot/", Mode: 0o755},
		{Typeflag: tar.TypeReg, Name: "6.1.0-47-amd64.btf", Mode: 0o644, Size: 600},
		{Typeflag: tar.TypeSymlink, Name: "./vmlinuz", Linkname: "boot/vmlinuz"},
		{Typeflag: tar.TypeReg, Name: "./" + long, Mode: 0o644, Size: 3},
	}
	for _, format := range []tar.Format{tar.FormatUSTAR, tar.FormatPAX, tar.FormatGNU} {
		hs := headers
		if format == tar.FormatUSTAR {
			hs = headers[:3]
		}
		f.Add(stdArchive(f, format, hs))
	}
	f.Fuzz(func(t *testing.T, archive []byte) {
		got, err := readAll(archive)
		if err != nil {
			return
		}
		want, err := readAllStd(archive)
		if err != nil {
			return
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("got  %s\nwant %s", summary(got), summary(want))
		}
	})
}

package tarfile

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// member is what a reader makes of one member.
type member struct {
	Name     string
	Typeflag byte
	Data     string
}

// readAll reads every member with this package's reader.
func readAll(archive []byte) ([]member, error) {
	tr := NewReader(bytes.NewReader(archive))
	return readMembers(tr, func() (string, byte, int64, error) {
		h, err := tr.Next()
		if err != nil {
			return "", 0, 0, err
		}
		return h.Name, h.Typeflag, h.Size, nil
	})
}

// readAllStd reads every member with archive/tar, the reference. Its
// header's size is left unchecked (-1): archive/tar keeps the size field
// of members that have no data.
func readAllStd(archive []byte) ([]member, error) {
	tr := tar.NewReader(bytes.NewReader(archive))
	return readMembers(tr, func() (string, byte, int64, error) {
		h, err := tr.Next()
		if err != nil {
			return "", 0, 0, err
		}
		return h.Name, h.Typeflag, -1, nil
	})
}

// readMembers reads members until next returns io.EOF, each member's data
// from data, checking it against the size next gives unless that is -1.
func readMembers(data io.Reader, next func() (name string, typeflag byte, size int64, err error)) ([]member, error) {
	var ms []member
	for {
		name, typeflag, size, err := next()
		if err == io.EOF {
			return ms, nil
		}
		if err != nil {
			return ms, err
		}
		b, err := io.ReadAll(data)
		if err != nil {
			return ms, err
		}
		if size >= 0 && int64(len(b)) != size {
			return ms, fmt.Errorf("%s: read %d bytes, header says %d", name, len(b), size)
		}
		ms = append(ms, member{name, typeflag, string(b)})
	}
}

// stdArchive writes the headers with archive/tar in the given format, each
// regular file with data of its size.
func stdArchive(t testing.TB, format tar.Format, headers []tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for i, h := range headers {
		h.Format = format
		h.ModTime = time.Unix(1700000000, 0)
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(bytes.Repeat([]byte{byte('a' + i)}, int(h.Size))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReaderAgreesWithArchiveTar: on archives that archive/tar writes in
// each format, with names that need ustar's prefix, a pax record or a GNU
// long name, the reader gives what archive/tar reads.
func TestReaderAgreesWithArchiveTar(t *testing.T) {
	long := "lib/modules/6.1.0-47-amd64/kernel/drivers/net/ethernet/" + strings.Repeat("vendor/", 12) + "driver.ko"
	headers := []tar.Header{
		{Typeflag: tar.TypeDir, Name: "./boot/", Mode: 0o755},
		{Typeflag: tar.TypeReg, Name: "./boot/vmlinuz-6.1.0-47-amd64", Mode: 0o644, Size: 1000},
		{Typeflag: tar.TypeReg, Name: "empty", Mode: 0o644},
		{Typeflag: tar.TypeSymlink, Name: "./vmlinuz", Linkname: "boot/vmlinuz-6.1.0-47-amd64"},
		{Typeflag: tar.TypeReg, Name: "./" + long[:140], Mode: 0o644, Size: 512}, // ustar: prefix
		{Typeflag: tar.TypeReg, Name: "./" + long, Mode: 0o644, Size: 513},       // pax or GNU long name
		{Typeflag: tar.TypeReg, Name: "6.1.0-47-amd64.btf", Mode: 0o644, Size: 4096},
	}
	for _, format := range []tar.Format{tar.FormatUSTAR, tar.FormatPAX, tar.FormatGNU} {
		t.Run(format.String(), func(t *testing.T) {
			hs := headers
			if format == tar.FormatUSTAR {
				hs = slicesWithout(headers, 5) // ustar cannot hold the longest name
			}
			archive := stdArchive(t, format, hs)
			got, err := readAll(archive)
			if err != nil {
				t.Fatal(err)
			}
			want, err := readAllStd(archive)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got  %s\nwant %s", summary(got), summary(want))
			}
		})
	}
}

// summary names the members, with their type and data length.
func summary(ms []member) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "[%q %c %d] ", m.Name, m.Typeflag, len(m.Data))
	}
	return b.String()
}

func slicesWithout(hs []tar.Header, i int) []tar.Header {
	return append(append([]tar.Header(nil), hs[:i]...), hs[i+1:]...)
}

// TestReaderTruncated: an archive cut anywhere fails with archive/tar
// exactly where it fails with this reader, and gives the same members up
// to there.
func TestReaderTruncated(t *testing.T) {
	for _, format := range []tar.Format{tar.FormatPAX, tar.FormatGNU} {
		archive := stdArchive(t, format, []tar.Header{
			{Typeflag: tar.TypeReg, Name: "a.btf", Mode: 0o644, Size: 700},
			{Typeflag: tar.TypeReg, Name: strings.Repeat("long/", 60) + "b.btf", Mode: 0o644, Size: 10}, // a pax record or GNU long name
		})
		for cut := range len(archive) {
			got, err := readAll(archive[:cut])
			want, stdErr := readAllStd(archive[:cut])
			if (err == nil) != (stdErr == nil) || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s cut at %d: got %s, %v; archive/tar: %s, %v", format, cut, summary(got), err, summary(want), stdErr)
			}
		}
	}
}

func TestReaderBadHeader(t *testing.T) {
	archive := stdArchive(t, tar.FormatUSTAR, []tar.Header{{Typeflag: tar.TypeReg, Name: "a", Size: 1}})
	for name, corrupt := range map[string]func([]byte){
		"checksum": func(b []byte) { b[0] = 'b' },
		"size":     func(b []byte) { copy(b[124:136], "notoctal!!!\x00") },
		"pax":      func(b []byte) { b[156] = 'x' },
	} {
		b := bytes.Clone(archive)
		corrupt(b)
		if name != "checksum" {
			fixChecksum(b)
		}
		if _, err := readAll(b); !errors.Is(err, ErrHeader) {
			t.Errorf("%s: %v, want ErrHeader", name, err)
		}
	}
}

func fixChecksum(h []byte) {
	var sum int64
	for i, c := range h[:blockSize] {
		if 148 <= i && i < 156 {
			c = ' '
		}
		sum += int64(c)
	}
	putOctal(h[148:155], sum)
}

// TestReaderBTFHub reads the BTFHub archives of the testdata corpus as
// archive/tar does.
func TestReaderBTFHub(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "btfhub", "*", "*", "*", "*.btf.tar.xz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata archives: %v", err)
	}
	for _, p := range paths {
		xzData, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := xz.NewReader(bytes.NewReader(xzData), 0)
		if err != nil {
			t.Fatal(err)
		}
		archive, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(archive)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want, err := readAllStd(archive)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 {
			t.Errorf("%s: got %d members, archive/tar %d, or they differ", p, len(got), len(want))
		}
	}
}

// TestWriteFile: the archive is the one archive/tar writes for the same
// header, and reads back.
func TestWriteFile(t *testing.T) {
	for _, size := range []int{0, 1, 512, 4097} {
		data := bytes.Repeat([]byte{0x9f}, size)
		var got bytes.Buffer
		if err := WriteFile(&got, "6.1.0-47-amd64.btf", 0o644, data); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		tw := tar.NewWriter(&want)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "6.1.0-47-amd64.btf", Mode: 0o644, Size: int64(size), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("size %d: bytes differ from archive/tar's", size)
		}
		ms, err := readAll(got.Bytes())
		if err != nil || len(ms) != 1 || ms[0].Data != string(data) {
			t.Errorf("size %d: read back %d members, %v", size, len(ms), err)
		}
	}
	if err := WriteFile(io.Discard, strings.Repeat("x", 101), 0o644, nil); err == nil {
		t.Error("a 101-byte name was accepted")
	}
}

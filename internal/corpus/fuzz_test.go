package corpus

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/btfhub"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

// FuzzReadBTF feeds ReadBTF's reader (compression, BTFHub tarball, ELF
// vmlinux or module, raw BTF, kernel images): errors, never panics, and
// the BTF it returns is whole.
func FuzzReadBTF(f *testing.F) {
	// Small seeds with the structure of each form, so that mutations are
	// cheap: a compressed module, raw split BTF, a vmlinux, a BTFHub
	// archive.
	ko := extracttest.MakeELF(elf.EM_X86_64, extracttest.Section{Name: ".BTF", Data: extracttest.SplitBTF(f)})
	f.Add(extracttest.Compressors[extract.FormatXZ](f, ko))
	f.Add(extracttest.Compressors[extract.FormatZstd](f, ko))
	f.Add(extracttest.SplitBTF(f))
	f.Add(extracttest.VMLinuxELF(f, elf.EM_X86_64))
	f.Add(tarXZ(f, extracttest.Section{Name: "6.1.0-1-amd64.btf", Data: extracttest.SmallBTF(f)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := fileBTF(data)
		if err != nil {
			return
		}
		if _, err := extract.BtfBlob(file.BTF); err != nil {
			t.Fatalf("returned BTF has a bad header: %v", err)
		}
	})
}

// FuzzTarMemberBTF feeds the BTFHub archive's tar reading, checked
// against a plain walk of the archive with archive/tar: where the walk
// reads the whole archive, btfhub.ReadTar returns the one regular .btf
// member's bytes, errNoBTF when there is none, and an error when there are
// two. Its seeds are archives in each format archive/tar writes (ustar,
// pax, GNU long names), and its committed inputs include those of the
// differential target that compared btfembed's own tar reader with
// archive/tar before btfembed went back to archive/tar (issue 19).
func FuzzTarMemberBTF(f *testing.F) {
	f.Add(unxzNoTB(tarXZ(f, extracttest.Section{Name: "6.1.0-1-amd64.btf", Data: extracttest.SmallBTF(f)})))
	f.Add(unxzNoTB(tarXZ(f, extracttest.Section{Name: "README", Data: []byte("x")})))
	f.Add(unxzNoTB(tarXZ(f)))
	long := "lib/modules/6.1.0-47-amd64/" + strings.Repeat("dir/", 30) + "6.1.0-47-amd64.btf"
	for _, format := range []tar.Format{tar.FormatUSTAR, tar.FormatPAX, tar.FormatGNU} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		members := []tar.Header{
			{Typeflag: tar.TypeDir, Name: "./boot/", Mode: 0o755},
			{Typeflag: tar.TypeSymlink, Name: "./x.btf", Linkname: "boot/x.btf"},
			{Typeflag: tar.TypeReg, Name: long, Mode: 0o644, Size: int64(len(extracttest.SmallBTF(f)))},
		}
		if format == tar.FormatUSTAR {
			members[2].Name = "6.1.0-47-amd64.btf" // ustar cannot hold the long name
		}
		for _, h := range members {
			h.Format = format
			tw.WriteHeader(&h)
			if h.Typeflag == tar.TypeReg {
				tw.Write(extracttest.SmallBTF(f))
			}
		}
		tw.Close()
		f.Add(b.Bytes())
	}
	f.Add(sparseTar(f, "6.1.0-47-amd64.btf", extracttest.SmallBTF(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := btfhub.ReadTar(data)
		var want [][]byte // the regular .btf members
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, werr := tr.Next()
			if werr == io.EOF {
				break
			}
			if werr != nil {
				return // the walk fails too: any error will do
			}
			if h.Typeflag == tar.TypeReg && strings.HasSuffix(h.Name, ".btf") {
				b, werr := io.ReadAll(io.LimitReader(tr, extract.MaxBTF+1))
				if werr != nil {
					return
				}
				want = append(want, b)
			}
		}
		switch {
		case len(want) == 0 && !errors.Is(err, errNoBTF):
			t.Fatalf("no .btf member: got %d bytes, error %v; want errNoBTF", len(got), err)
		case len(want) > 1 && err == nil:
			t.Fatalf("%d .btf members: no error", len(want))
		case len(want) == 1 && len(want[0]) <= extract.MaxBTF && (err != nil || !bytes.Equal(got, want[0])):
			t.Fatalf("one .btf member of %d bytes: got %d bytes, error %v", len(want[0]), len(got), err)
		}
	})
}

// sparseTar is a tarball with one member, name, stored as a PAX sparse
// file (format 1.0, which archive/tar reads but does not write): a map
// with one region holding all of data after a hole of 100 bytes. Its
// contents as read are the hole's zeros and data, not the bytes stored.
func sparseTar(tb testing.TB, name string, data []byte) []byte {
	const hole = 100
	header := func(name string, typ byte, size int) []byte {
		h := make([]byte, 512)
		copy(h, name)
		copy(h[100:], "0000644\x00")
		copy(h[108:], "0000000\x00")
		copy(h[116:], "0000000\x00")
		copy(h[124:], fmt.Sprintf("%011o\x00", size))
		copy(h[136:], "00000000000\x00")
		h[156] = typ
		copy(h[257:], "ustar\x0000")
		copy(h[148:], "        ")
		sum := 0
		for _, c := range h {
			sum += int(c)
		}
		copy(h[148:], fmt.Sprintf("%06o\x00 ", sum))
		return h
	}
	pad := func(b []byte) []byte { return append(b, make([]byte, (512-len(b)%512)%512)...) }
	var records string
	for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", name}, {"GNU.sparse.realsize", fmt.Sprint(hole + len(data))}} {
		rec := " " + kv[0] + "=" + kv[1] + "\n"
		n := len(rec) + 1
		for len(fmt.Sprint(n))+len(rec) != n {
			n++
		}
		records += fmt.Sprint(n) + rec
	}
	stored := pad([]byte(fmt.Sprintf("1\n%d\n%d\n", hole, len(data))))
	stored = append(stored, data...)
	var b []byte
	b = append(b, header("PaxHeaders/"+name, tar.TypeXHeader, len(records))...)
	b = append(b, pad([]byte(records))...)
	b = append(b, header("GNUSparseFile.0/"+name, tar.TypeReg, len(stored))...)
	b = append(b, pad(stored)...)
	b = append(b, make([]byte, 1024)...)
	tr := tar.NewReader(bytes.NewReader(b))
	h, err := tr.Next()
	if err != nil {
		tb.Fatal(err)
	}
	got, err := io.ReadAll(tr)
	if err != nil || h.Name != name || !bytes.Equal(got, append(make([]byte, hole), data...)) {
		tb.Fatalf("sparseTar: archive/tar reads %q, %d bytes (%v): not the sparse file made", h.Name, len(got), err)
	}
	return b
}

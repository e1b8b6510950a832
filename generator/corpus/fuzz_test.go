package corpus

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
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
// member's bytes, ErrNoBTF when there is none, and an error when there are
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
		case len(want) == 0 && !errors.Is(err, ErrNoBTF):
			t.Fatalf("no .btf member: got %d bytes, error %v; want ErrNoBTF", len(got), err)
		case len(want) > 1 && err == nil:
			t.Fatalf("%d .btf members: no error", len(want))
		case len(want) == 1 && len(want[0]) <= extract.MaxBTF && (err != nil || !bytes.Equal(got, want[0])):
			t.Fatalf("one .btf member of %d bytes: got %d bytes, error %v", len(want[0]), len(got), err)
		}
	})
}

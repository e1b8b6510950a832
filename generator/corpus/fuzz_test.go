package corpus

import (
	"debug/elf"
	"testing"

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

// FuzzTarMemberBTF feeds the BTFHub archive's tar reader.
func FuzzTarMemberBTF(f *testing.F) {
	f.Add(unxzNoTB(tarXZ(f, extracttest.Section{Name: "6.1.0-1-amd64.btf", Data: extracttest.SmallBTF(f)})))
	f.Add(unxzNoTB(tarXZ(f, extracttest.Section{Name: "README", Data: []byte("x")})))
	f.Add(unxzNoTB(tarXZ(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		extract.TarMemberBTF(data)
	})
}

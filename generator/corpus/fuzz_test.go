package corpus

import (
	"debug/elf"
	"os"
	"testing"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

// FuzzReadBTF feeds ReadBTF's reader (compression, BTFHub tarball, ELF
// vmlinux or module, raw BTF, kernel images): errors, never panics, and
// the BTF it returns is whole.
func FuzzReadBTF(f *testing.F) {
	ko, err := os.ReadFile(testModule.file)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ko)
	f.Add(extracttest.SplitBTF(f))
	f.Add(extracttest.VMLinuxELF(f, elf.EM_X86_64))
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
		tarMemberBTF(data)
	})
}

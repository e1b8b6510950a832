package extract

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

func TestElfSection(t *testing.T) {
	for machine, want := range map[elf.Machine]string{
		elf.EM_X86_64: "x86_64", elf.EM_AARCH64: "arm64", elf.EM_RISCV: "riscv64",
		elf.EM_S390: "s390x", elf.EM_PPC64: "ppc64le", elf.EM_LOONGARCH: "loongarch64", elf.EM_SPARCV9: "",
	} {
		data := extracttest.MakeELF(machine, extracttest.Section{Name: ".BTF", Data: []byte("btf")})
		sec, arch, err := elfSection(data, ".BTF")
		if err != nil || string(sec) != "btf" || arch != want {
			t.Errorf("%v: section %q, arch %q, error %v; want btf, %q", machine, sec, arch, err, want)
		}
		if sec, _, err := elfSection(data, ".BTF.ext"); sec != nil || err != nil {
			t.Errorf("%v: missing section gave %q, %v", machine, sec, err)
		}
	}
	if _, _, err := elfSection(append(elfMagic, 2, 1, 1), ".BTF"); err == nil {
		t.Error("truncated ELF: no error")
	}
}

// TestReadELFHead reads the first bytes of ELF files: the corpus's real
// x86-64 and arm64 modules, and headers of other machines made from the
// x86-64 one's by changing class, byte order (the fields after e_ident
// swapped with it), type and machine.
func TestReadELFHead(t *testing.T) {
	_, x86 := realModule(t, "x86_64", checksumRelease, "nvme")
	_, arm64 := realModule(t, "arm64", "6.1.0-57-arm64", "virtio_net")
	head := func(class elf.Class, data elf.Data, version byte, typ elf.Type, machine elf.Machine) []byte {
		h := bytes.Clone(x86[:elfHeadSize])
		h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(class), byte(data), version
		order := binary.ByteOrder(binary.LittleEndian)
		if data == elf.ELFDATA2MSB {
			order = binary.BigEndian
		}
		order.PutUint16(h[16:], uint16(typ))
		order.PutUint16(h[18:], uint16(machine))
		return h
	}
	for _, tt := range []struct {
		name string
		head []byte
		arch string // "" for an error
	}{
		{"x86-64 module", x86[:elfHeadSize], "x86_64"},
		{"arm64 module", arm64[:elfHeadSize], "arm64"},
		{"s390x vmlinux", head(elf.ELFCLASS64, elf.ELFDATA2MSB, 1, elf.ET_EXEC, elf.EM_S390), "s390x"},
		{"ppc64 vmlinux", head(elf.ELFCLASS64, elf.ELFDATA2MSB, 1, elf.ET_EXEC, elf.EM_PPC64), "ppc64"},
		{"ppc64le vmlinux", head(elf.ELFCLASS64, elf.ELFDATA2LSB, 1, elf.ET_EXEC, elf.EM_PPC64), "ppc64le"},
		{"i386 vmlinux", head(elf.ELFCLASS32, elf.ELFDATA2LSB, 1, elf.ET_EXEC, elf.EM_386), "i386"},
		{"arm64 PIE vmlinux", head(elf.ELFCLASS64, elf.ELFDATA2LSB, 1, elf.ET_DYN, elf.EM_AARCH64), "arm64"},
		{"i386 machine, 64-bit class", head(elf.ELFCLASS64, elf.ELFDATA2LSB, 1, elf.ET_EXEC, elf.EM_386), ""},
		{"s390 (31-bit)", head(elf.ELFCLASS32, elf.ELFDATA2MSB, 1, elf.ET_EXEC, elf.EM_S390), ""},
		{"no byte order", head(elf.ELFCLASS64, elf.ELFDATANONE, 1, elf.ET_EXEC, elf.EM_X86_64), ""},
		{"no class", head(elf.ELFCLASSNONE, elf.ELFDATA2LSB, 1, elf.ET_EXEC, elf.EM_X86_64), ""},
		{"version 2", head(elf.ELFCLASS64, elf.ELFDATA2LSB, 2, elf.ET_EXEC, elf.EM_X86_64), ""},
		{"no type", head(elf.ELFCLASS64, elf.ELFDATA2LSB, 1, elf.ET_NONE, elf.EM_X86_64), ""},
		{"SPARC", head(elf.ELFCLASS64, elf.ELFDATA2MSB, 1, elf.ET_EXEC, elf.EM_SPARCV9), ""},
		{"cut short", x86[:elfHeadSize-1], ""},
		{"not ELF", []byte("!<arch>\ndebian-binary   "), ""},
	} {
		h, err := readELFHead(tt.head)
		if tt.arch == "" {
			if !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("%s: %+v, error %v; want one wrapping ErrUnknownFormat", tt.name, h, err)
			}
			continue
		}
		if err != nil || h.Arch != tt.arch {
			t.Errorf("%s: arch %q, error %v; want %q", tt.name, h.Arch, err, tt.arch)
		}
	}
}

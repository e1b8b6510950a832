package extract

import (
	"debug/elf"
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

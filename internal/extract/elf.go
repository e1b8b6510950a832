package extract

import (
	"bytes"
	"debug/elf"
	"fmt"
)

var elfMagic = []byte(elf.ELFMAG)

func IsELF(data []byte) bool { return bytes.HasPrefix(data, elfMagic) }

// elfSection returns the contents of the named section of an ELF file, or
// nil when there is no such section. debug/elf panics on some malformed
// inputs; those panics become errors here.
func elfSection(data []byte, name string) (b []byte, machine string, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, machine, err = nil, "", fmt.Errorf("malformed ELF: %v", r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("malformed ELF: %w", err)
	}
	machine = elfArch(f)
	sec := f.Section(name)
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, machine, nil
	}
	// A compressed section (SHF_COMPRESSED) is decompressed as read, so
	// the cap holds whatever size its header claims.
	b, err = ReadAllLimit(sec.Open(), MaxBTF)
	if err != nil {
		return nil, machine, fmt.Errorf("read ELF section %s: %w", name, err)
	}
	return b, machine, nil
}

// ElfBTF is what an ELF file (a vmlinux or a module) carries as BTF.
type ElfBTF struct {
	BTF  []byte // the .BTF section, cut to its BTF blob
	Base []byte // the .BTF.base section, cut to its BTF blob; nil if none
	Arch string // as elfArch gives it
}

// ReadELFBTF reads the .BTF and .BTF.base sections of an ELF file, checked
// for framing only: a module's BTF is split and validating it needs its base.
func ReadELFBTF(data []byte) (ElfBTF, error) {
	sec, arch, err := elfSection(data, ".BTF")
	if err != nil {
		return ElfBTF{}, err
	}
	if sec == nil {
		return ElfBTF{}, fmt.Errorf("%w: ELF without .BTF section (built without CONFIG_DEBUG_INFO_BTF, or for a module CONFIG_DEBUG_INFO_BTF_MODULES?)", ErrNoBTF)
	}
	e := ElfBTF{Arch: arch}
	if e.BTF, err = BtfBlob(sec); err != nil {
		return ElfBTF{}, fmt.Errorf(".BTF section: %w", err)
	}
	base, _, err := elfSection(data, ".BTF.base")
	if err != nil {
		return ElfBTF{}, err
	}
	if base != nil {
		if e.Base, err = BtfBlob(base); err != nil {
			return ElfBTF{}, fmt.Errorf(".BTF.base section: %w", err)
		}
	}
	return e, nil
}

// elfArch names the architecture of an ELF file as kernelkey.NormalizeArch does, or
// returns "" for machines the kernel's BTF is not built for.
func elfArch(f *elf.File) string {
	is64 := f.Class == elf.ELFCLASS64
	le := f.Data == elf.ELFDATA2LSB
	switch f.Machine {
	case elf.EM_X86_64:
		return "x86_64"
	case elf.EM_386:
		return "i386"
	case elf.EM_AARCH64:
		return "arm64"
	case elf.EM_ARM:
		return "arm"
	case elf.EM_S390:
		if is64 {
			return "s390x"
		}
	case elf.EM_PPC64:
		if le {
			return "ppc64le"
		}
		return "ppc64"
	case elf.EM_RISCV:
		if is64 {
			return "riscv64"
		}
	case elf.EM_LOONGARCH:
		if is64 {
			return "loongarch64"
		}
	case elf.EM_MIPS:
		if is64 && le {
			return "mips64el"
		}
	}
	return ""
}

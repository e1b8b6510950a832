package extract

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
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
func elfArch(f *elf.File) string { return machineArch(f.Machine, f.Class, f.Data) }

// machineArch names the architecture of an ELF machine, class and byte
// order as kernelkey.NormalizeArch does, or returns "" for machines the
// kernel's BTF is not built for and for a class or byte order no kernel
// of that machine is built with (x32's ELFCLASS32 EM_X86_64).
func machineArch(m elf.Machine, class elf.Class, data elf.Data) string {
	is64 := class == elf.ELFCLASS64
	le := data == elf.ELFDATA2LSB
	switch {
	case m == elf.EM_X86_64 && is64 && le:
		return "x86_64"
	case m == elf.EM_386 && !is64 && le:
		return "i386"
	case m == elf.EM_AARCH64 && is64:
		return "arm64"
	case m == elf.EM_ARM && !is64:
		return "arm"
	case m == elf.EM_S390 && is64:
		return "s390x"
	case m == elf.EM_PPC64 && is64 && le:
		return "ppc64le"
	case m == elf.EM_PPC64 && is64:
		return "ppc64"
	case m == elf.EM_RISCV && is64:
		return "riscv64"
	case m == elf.EM_LOONGARCH && is64:
		return "loongarch64"
	case m == elf.EM_MIPS && is64 && le:
		return "mips64el"
	}
	return ""
}

// elfHeadSize is how much of an ELF file's start tells what it is:
// e_ident, e_type and e_machine (the System V ABI's ELF header).
const elfHeadSize = 20

// elfHead is what the first elfHeadSize bytes of an ELF file tell.
type elfHead struct {
	Class   elf.Class
	Data    elf.Data
	Type    elf.Type
	Machine elf.Machine
	Arch    string // as machineArch names it, "" for machines without kernel BTF
}

// readELFHead checks that head, a file's first elfHeadSize bytes, starts
// a kernel's ELF file: the magic, a class, byte order and version the
// format defines, a vmlinux's or a module's type (executable, shared
// object for a PIE kernel, relocatable for a module) and a machine the
// kernel's BTF is built for. It lets a caller refuse a file from its
// first bytes, before anything else of it is read or written.
func readELFHead(head []byte) (elfHead, error) {
	if len(head) < elfHeadSize || !IsELF(head) {
		return elfHead{}, fmt.Errorf("%w: not an ELF file", ErrUnknownFormat)
	}
	h := elfHead{Class: elf.Class(head[elf.EI_CLASS]), Data: elf.Data(head[elf.EI_DATA])}
	var order binary.ByteOrder
	switch h.Data {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return elfHead{}, fmt.Errorf("%w: ELF byte order %d", ErrUnknownFormat, h.Data)
	}
	if h.Class != elf.ELFCLASS32 && h.Class != elf.ELFCLASS64 {
		return elfHead{}, fmt.Errorf("%w: ELF class %d", ErrUnknownFormat, h.Class)
	}
	if v := elf.Version(head[elf.EI_VERSION]); v != elf.EV_CURRENT {
		return elfHead{}, fmt.Errorf("%w: ELF version %d", ErrUnknownFormat, v)
	}
	h.Type, h.Machine = elf.Type(order.Uint16(head[16:])), elf.Machine(order.Uint16(head[18:]))
	if h.Type != elf.ET_EXEC && h.Type != elf.ET_DYN && h.Type != elf.ET_REL {
		return elfHead{}, fmt.Errorf("%w: ELF type %v, not a kernel's or a module's", ErrUnknownFormat, h.Type)
	}
	if h.Arch = machineArch(h.Machine, h.Class, h.Data); h.Arch == "" {
		return elfHead{}, fmt.Errorf("%w: ELF machine %v (%v, %v), no architecture with kernel BTF", ErrUnknownFormat, h.Machine, h.Class, h.Data)
	}
	return h, nil
}

// Package bpfobj recognizes BPF ELF objects by their header, without
// parsing the rest: the generator pairs objects with kernel architectures
// by it, and go:generate mode finds the objects a package embeds by it.
package bpfobj

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// ReadHeader reads the part of an ELF header that ByteOrder looks at.
func ReadHeader(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	header := make([]byte, 20)
	if _, err := io.ReadFull(f, header); err != nil {
		return nil, fmt.Errorf("%s: ELF header: %w", path, err)
	}
	return header, nil
}

// ByteOrder checks that header, from ReadHeader, is a BPF object's and
// returns its byte order; path names the file in errors.
func ByteOrder(path string, header []byte) (binary.ByteOrder, error) {
	if len(header) < 20 || string(header[:4]) != elf.ELFMAG {
		return nil, fmt.Errorf("%s: not an ELF file", path)
	}
	var order binary.ByteOrder
	switch elf.Data(header[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("%s: ELF data encoding %d", path, header[elf.EI_DATA])
	}
	if m := elf.Machine(order.Uint16(header[18:])); m != elf.EM_BPF {
		return nil, fmt.Errorf("%s: ELF machine %s, want %s", path, m, elf.EM_BPF)
	}
	return order, nil
}

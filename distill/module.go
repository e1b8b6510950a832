package distill

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/therootcompany/xz"
)

// ErrNoBTF is wrapped by ReadModule's error for a module without a .BTF
// section (built without CONFIG_DEBUG_INFO_BTF_MODULES).
var ErrNoBTF = errors.New("no .BTF section")

// Module is the BTF of a kernel module file.
type Module struct {
	// BTF is the .BTF section: split BTF over vmlinux, or over Base when
	// Base is set.
	BTF []byte
	// Base is the .BTF.base section, the distilled base pahole 1.28+
	// writes for out-of-tree modules; nil if absent.
	Base []byte
}

// maxModuleSize bounds decompression: the largest in-tree modules are a few
// tens of MB uncompressed.
const maxModuleSize = 1 << 30

// ReadModule returns the BTF sections of a kernel module, given the bytes
// of its file: an ELF object, or one compressed with xz, gzip or zstd
// (.ko.xz, .ko.gz, .ko.zst).
func ReadModule(data []byte) (Module, error) {
	raw, err := decompress(data)
	if err != nil {
		return Module{}, err
	}
	return readELF(raw)
}

var (
	magicXZ   = []byte{0xfd, '7', 'z', 'X', 'Z', 0}
	magicGzip = []byte{0x1f, 0x8b}
	magicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

func decompress(data []byte) ([]byte, error) {
	var r io.Reader
	switch {
	case bytes.HasPrefix(data, magicXZ):
		zr, err := xz.NewReader(bytes.NewReader(data), 0)
		if err != nil {
			return nil, fmt.Errorf("xz: %w", err)
		}
		r = zr
	case bytes.HasPrefix(data, magicGzip):
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		r = zr
	case bytes.HasPrefix(data, magicZstd):
		zr, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer zr.Close()
		r = zr
	default:
		return data, nil
	}
	out, err := io.ReadAll(io.LimitReader(r, maxModuleSize+1))
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	if len(out) > maxModuleSize {
		return nil, fmt.Errorf("decompressed module exceeds %d bytes", maxModuleSize)
	}
	return out, nil
}

// readELF reads the sections with debug/elf, which panics on some
// malformed files: those panics become errors.
func readELF(raw []byte) (m Module, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = Module{}, fmt.Errorf("malformed ELF: %v", r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		return Module{}, err
	}
	defer f.Close()
	sec := f.Section(".BTF")
	if sec == nil {
		return Module{}, ErrNoBTF
	}
	if m.BTF, err = sectionData(sec); err != nil {
		return Module{}, err
	}
	if sec := f.Section(".BTF.base"); sec != nil {
		if m.Base, err = sectionData(sec); err != nil {
			return Module{}, err
		}
	}
	return m, nil
}

func sectionData(sec *elf.Section) ([]byte, error) {
	if sec.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("section %s has no data", sec.Name)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", sec.Name, err)
	}
	return data, nil
}

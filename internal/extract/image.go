package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// ImageBTF is the vmlinux BTF found in a kernel image and what the image
// tells about the kernel.
type ImageBTF struct {
	BTF    []byte
	Arch   string // from the ELF machine or the image header, "" if unknown
	Banner BannerInfo
}

// maxImageDepth bounds nested containers (an EFI zboot image holding a
// gzip holding an Image, a bzImage holding an xz holding an ELF).
const maxImageDepth = 4

// FindImageBTF finds the vmlinux BTF in a kernel in any shape this package
// knows: ELF vmlinux, x86 bzImage, EFI zboot, arm64 and riscv Image, a
// compressed image (Image.gz), raw BTF, or a flat image holding the .BTF
// section somewhere. A kernel image without BTF is an error wrapping
// ErrNoBTF that says where such a kernel's types are: its DWARF.
func FindImageBTF(data []byte) (ImageBTF, error) {
	img, err := findImageBTFDepth(data, 0)
	if errors.Is(err, ErrNoBTF) && (isBzImage(data) || isZboot(data) || isZImage(data) || flatImageArch(data) != "") {
		err = fmt.Errorf("%w; a kernel built without BTF is imported from its DWARF instead: the vmlinux its build left (CONFIG_DEBUG_INFO), or its debug package (Debian linux-image-<release>-dbg, Ubuntu linux-image-unsigned-<release>-dbgsym, RHEL and Fedora kernel-debuginfo), given to btfembed corpus import (docs/corpus.md)", err)
	}
	return img, err
}

// flatImageArch is the architecture of an arm64 or riscv Image, by its
// header's magic; "" for anything else.
func flatImageArch(data []byte) string {
	switch {
	case HasPrefixAt(data, 56, []byte("ARM\x64")):
		return "arm64"
	case HasPrefixAt(data, 56, []byte("RSC\x05")):
		return "riscv64"
	}
	return ""
}

func findImageBTFDepth(data []byte, depth int) (ImageBTF, error) {
	if depth > maxImageDepth {
		return ImageBTF{}, errors.New("images nested too deep")
	}
	switch {
	case IsELF(data):
		e, err := ReadELFBTF(data)
		if err != nil {
			return ImageBTF{}, err
		}
		if _, err := ParseBTF(e.BTF, nil); err != nil {
			return ImageBTF{}, fmt.Errorf(".BTF section: %w", err)
		}
		b, _ := FindBanner(data)
		return ImageBTF{BTF: e.BTF, Arch: e.Arch, Banner: b}, nil

	case isBzImage(data):
		payload, format, err := bzImagePayload(data)
		if err != nil {
			return ImageBTF{}, err
		}
		return nestedImage(payload, format, depth, "bzImage payload")

	case isZboot(data):
		payload, format, err := zbootPayload(data)
		if err != nil {
			return ImageBTF{}, err
		}
		return nestedImage(payload, format, depth, "zboot payload")

	case isZImage(data):
		return zImageBTF(data, depth)

	case flatImageArch(data) != "":
		return flatImage(data, flatImageArch(data))
	}

	if format := SniffCompression(data); format != FormatNone && format != FormatLZMA {
		return nestedImage(data, format, depth, format+" stream")
	}
	if IsRawBTF(data) {
		blob, err := wholeBTF(data)
		if err != nil {
			return ImageBTF{}, err
		}
		if _, err := ParseBTF(blob, nil); err != nil {
			return ImageBTF{}, err
		}
		return ImageBTF{BTF: blob}, nil
	}
	if img, err := flatImage(data, ""); err == nil {
		return img, nil
	}
	return ImageBTF{}, fmt.Errorf("%w: not BTF, ELF, a kernel image or a compressed stream", ErrUnknownFormat)
}

// nestedImage decompresses a payload and looks for BTF inside it. The BTF
// found is a copy, so the decompressed image is given back to the memory
// budget on return.
func nestedImage(payload []byte, format string, depth int, what string) (ImageBTF, error) {
	inner, release, err := Decompress(payload, format, MaxImage)
	if err != nil {
		return ImageBTF{}, fmt.Errorf("%s: %w", what, err)
	}
	defer release()
	img, err := findImageBTFDepth(inner, depth+1)
	if err != nil {
		return ImageBTF{}, fmt.Errorf("%s (%s): %w", what, format, err)
	}
	return img, nil
}

// flatImage finds BTF in an uncompressed image that is not ELF.
func flatImage(data []byte, arch string) (ImageBTF, error) {
	blob, err := scanBTF(data)
	if err != nil {
		return ImageBTF{}, fmt.Errorf("%w in the image (kernel built without CONFIG_DEBUG_INFO_BTF?)", err)
	}
	b, _ := FindBanner(data)
	// A copy, so that the kernel does not keep the whole image alive.
	return ImageBTF{BTF: bytes.Clone(blob), Arch: arch, Banner: b}, nil
}

func HasPrefixAt(data []byte, off int, prefix []byte) bool {
	return len(data) >= off+len(prefix) && bytes.Equal(data[off:off+len(prefix)], prefix)
}

// x86 boot protocol (Documentation/arch/x86/boot.rst): the setup header at
// 0x1f1, "HdrS" at 0x202, and since protocol 2.08 the compressed payload's
// offset (from the start of the protected-mode code) and length.
const (
	bzSetupSects    = 0x1f1
	bzBootFlag      = 0x1fe
	bzHeaderMagic   = 0x202
	bzVersion       = 0x206
	bzPayloadOffset = 0x248
	bzPayloadLength = 0x24c
)

func isBzImage(data []byte) bool {
	return len(data) >= bzPayloadLength+4 &&
		binary.LittleEndian.Uint16(data[bzBootFlag:]) == 0xaa55 &&
		string(data[bzHeaderMagic:bzHeaderMagic+4]) == "HdrS"
}

// bzImagePayload cuts the compressed vmlinux out of a bzImage. Every format
// but gzip is followed by the uncompressed size as a little-endian 32-bit
// word (the kernel's size_append); it is cut off and not trusted: the
// decompression grows with what the payload really holds.
func bzImagePayload(data []byte) (payload []byte, format string, err error) {
	if v := binary.LittleEndian.Uint16(data[bzVersion:]); v < 0x208 {
		return nil, "", fmt.Errorf("bzImage boot protocol %d.%02d predates payload fields (2.08)", v>>8, v&0xff)
	}
	sects := int(data[bzSetupSects])
	if sects == 0 {
		sects = 4
	}
	start := uint64(sects+1)*512 + uint64(binary.LittleEndian.Uint32(data[bzPayloadOffset:]))
	end := start + uint64(binary.LittleEndian.Uint32(data[bzPayloadLength:]))
	if end > uint64(len(data)) || end < start+4 {
		return nil, "", fmt.Errorf("bzImage payload [%d, %d) outside the %d-byte file", start, end, len(data))
	}
	payload = data[start:end]
	format = SniffCompression(payload)
	switch format {
	case FormatNone:
		return nil, "", fmt.Errorf("%w: bzImage payload compression", ErrUnknownFormat)
	case FormatGzip:
		return payload, format, nil
	}
	return payload[:len(payload)-4], format, nil
}

// EFI zboot images (drivers/firmware/efi/libstub/zboot-header.S): "MZ",
// "zimg" at 4, the payload's offset and size at 8 and 12, and the
// compression's name at 24.
func isZboot(data []byte) bool {
	return len(data) >= 40 && string(data[:2]) == "MZ" && string(data[4:8]) == "zimg"
}

func zbootPayload(data []byte) ([]byte, string, error) {
	off := uint64(binary.LittleEndian.Uint32(data[8:]))
	size := uint64(binary.LittleEndian.Uint32(data[12:]))
	if off+size > uint64(len(data)) {
		return nil, "", fmt.Errorf("zboot payload [%d, %d) outside the %d-byte file", off, off+size, len(data))
	}
	name := string(bytes.TrimRight(data[24:40], "\x00"))
	format := map[string]string{
		"gzip": FormatGzip, "xzkern": FormatXZ, "xz": FormatXZ, "zstd22": FormatZstd, "zstd": FormatZstd,
		"lz4": FormatLZ4Legacy, "lzma": FormatLZMA, "bzip2": FormatBzip2, "lzo": FormatLZO,
	}[name]
	if format == "" {
		return nil, "", fmt.Errorf("%w: zboot compression %q", ErrUnknownFormat, name)
	}
	// The size word the build appends after non-gzip payloads lies outside
	// the size the header gives (drivers/firmware/efi/libstub/Makefile.zboot).
	return data[off : off+size], format, nil
}

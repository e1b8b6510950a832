// Package extracttest builds synthetic kernel files for tests: small BTF,
// ELF files, bzImage and EFI zboot images, every payload compression the
// kernel build knows, ar archives, tarballs and a Debian kernel package.
// It spells each container's layout out itself, from the documents it
// cites, rather than reuse the constants of the code under test.
package extracttest

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os/exec"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	uxz "github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// The real images cover xz, lz4, zstd and flat payloads; these synthetic
// ones cover the other containers and compressions the kernel build makes,
// around a small BTF blob made with rawbtf's encoder.

// lz4LegacyBlock is the uncompressed size of every block but the last in
// the kernel's lz4 legacy stream (lib/decompress_unlz4.c).
const lz4LegacyBlock = 8 << 20

// SmallBTF is standalone BTF with an int and a struct using it.
func SmallBTF(tb testing.TB) []byte {
	tb.Helper()
	enc := rawbtf.NewEncoder(binary.LittleEndian, nil)
	intID, err := enc.Add(rawbtf.Record{Kind: rawbtf.KindInt, Name: "int", SizeType: 4, Int: rawbtf.IntEnc{Encoding: rawbtf.IntSigned, Bits: 32}})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := enc.Add(rawbtf.Record{Kind: rawbtf.KindStruct, Name: "task_struct", SizeType: 4,
		Members: []rawbtf.Member{{Name: "pid", Type: intID}}}); err != nil {
		tb.Fatal(err)
	}
	return enc.Bytes()
}

// Banner is the banner synthetic kernels carry.
const Banner = "Linux version 6.99.0-7-test (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0) #1 SMP\n\x00"

// MakeELF builds a little-endian ELF64 file with the given sections, in
// order, after the null section and before .shstrtab.
func MakeELF(machine elf.Machine, sections ...Section) []byte {
	shstr := []byte{0}
	var body bytes.Buffer
	const ehsize = 64
	type placed struct {
		name, off, size uint64
	}
	var pl []placed
	for _, s := range sections {
		pl = append(pl, placed{uint64(len(shstr)), uint64(ehsize + body.Len()), uint64(len(s.Data))})
		shstr = append(append(shstr, s.Name...), 0)
		body.Write(s.Data)
	}
	shstrName := uint64(len(shstr))
	shstr = append(append(shstr, ".shstrtab"...), 0)
	shstrOff := uint64(ehsize + body.Len())
	body.Write(shstr)
	for body.Len()%8 != 0 {
		body.WriteByte(0)
	}
	shoff := uint64(ehsize + body.Len())

	var out bytes.Buffer
	h := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: 1,
		Shoff: shoff, Ehsize: ehsize, Shentsize: 64,
		Shnum: uint16(len(sections) + 2), Shstrndx: uint16(len(sections) + 1),
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	binary.Write(&out, binary.LittleEndian, h)
	out.Write(body.Bytes())
	binary.Write(&out, binary.LittleEndian, elf.Section64{})
	for _, p := range pl {
		binary.Write(&out, binary.LittleEndian, elf.Section64{Name: uint32(p.name), Type: uint32(elf.SHT_PROGBITS), Off: p.off, Size: p.size, Addralign: 1})
	}
	binary.Write(&out, binary.LittleEndian, elf.Section64{Name: uint32(shstrName), Type: uint32(elf.SHT_STRTAB), Off: shstrOff, Size: uint64(len(shstr)), Addralign: 1})
	return out.Bytes()
}

// Section is a named piece of a file: an ELF section, an archive member.
type Section struct {
	Name string
	Data []byte
}

// VMLinuxELF is a synthetic vmlinux: a banner in .rodata and the BTF.
func VMLinuxELF(tb testing.TB, machine elf.Machine) []byte {
	return MakeELF(machine, Section{".rodata", []byte(Banner)}, Section{".BTF", SmallBTF(tb)})
}

// MakeBzImage wraps a payload in an x86 boot sector and setup header the
// way arch/x86/boot/tools/build.c lays them out (one setup sector).
func MakeBzImage(payload []byte) []byte {
	// Offsets from Documentation/arch/x86/boot.rst: setup_sects,
	// boot_flag, header, version, payload_offset, payload_length.
	img := make([]byte, 2*512, 2*512+len(payload))
	img[0x1f1] = 1
	binary.LittleEndian.PutUint16(img[0x1fe:], 0xaa55)
	copy(img[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(img[0x206:], 0x20f)
	binary.LittleEndian.PutUint32(img[0x248:], 0)
	binary.LittleEndian.PutUint32(img[0x24c:], uint32(len(payload)))
	return append(img, payload...)
}

// MakeZboot wraps a compressed image in an EFI zboot header; as the kernel
// build does, a non-gzip payload is followed by the uncompressed size, which
// the header's payload size leaves out.
func MakeZboot(payload []byte, comp string, size int) []byte {
	img := make([]byte, 64, 64+len(payload)+4)
	copy(img, "MZ")
	copy(img[4:], "zimg")
	binary.LittleEndian.PutUint32(img[8:], 64)
	binary.LittleEndian.PutUint32(img[12:], uint32(len(payload)))
	copy(img[24:], comp)
	img = append(img, payload...)
	if comp != "gzip" {
		img = WithSize(img, size)
	}
	return img
}

// WithSize appends the uncompressed size as the kernel's size_append does.
func WithSize(compressed []byte, size int) []byte {
	return binary.LittleEndian.AppendUint32(compressed, uint32(size))
}

// Compressors make every payload compression the kernel build knows.
var Compressors = map[string]func(tb testing.TB, data []byte) []byte{
	"gzip": func(tb testing.TB, data []byte) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(data)
		w.Close()
		return b.Bytes()
	},
	"xz": func(tb testing.TB, data []byte) []byte {
		var b bytes.Buffer
		w, err := uxz.NewWriter(&b)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(data)
		w.Close()
		return b.Bytes()
	},
	"lzma": func(tb testing.TB, data []byte) []byte {
		var b bytes.Buffer
		w, err := lzma.WriterConfig{DictCap: 1 << 20, EOSMarker: true, SizeInHeader: false}.NewWriter(&b)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(data)
		w.Close()
		return b.Bytes()
	},
	"zstd": func(tb testing.TB, data []byte) []byte {
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			tb.Fatal(err)
		}
		return enc.EncodeAll(data, nil)
	},
	"lz4-legacy": func(tb testing.TB, data []byte) []byte {
		out := []byte{0x02, 0x21, 0x4c, 0x18}
		for len(data) > 0 {
			chunk := data[:min(len(data), lz4LegacyBlock)]
			data = data[len(chunk):]
			buf := make([]byte, lz4.CompressBlockBound(len(chunk)))
			n, err := lz4.CompressBlock(chunk, buf, nil)
			if err != nil || n == 0 {
				tb.Fatalf("lz4: %v (%d bytes)", err, n)
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(n))
			out = append(out, buf[:n]...)
		}
		return out
	},
	"lzo": func(tb testing.TB, data []byte) []byte { return compressCommand(tb, "lzop", "", data) },
	"bzip2": func(tb testing.TB, data []byte) []byte {
		return compressCommand(tb, "bzip2", " (Go has no bzip2 encoder)", data)
	},
}

// compressCommand compresses data with "tool -9 -c", skipping the test
// where the tool is not installed.
func compressCommand(tb testing.TB, tool, why string, data []byte) []byte {
	if _, err := exec.LookPath(tool); err != nil {
		tb.Skip(tool + " command not installed" + why)
	}
	cmd := exec.Command(tool, "-9", "-c")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// SplitBTF is split BTF over SmallBTF: a struct holding the base's int.
func SplitBTF(tb testing.TB) []byte {
	tb.Helper()
	base, err := rawbtf.Parse(SmallBTF(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	enc := rawbtf.NewEncoder(binary.LittleEndian, base)
	if _, err := enc.Add(rawbtf.Record{Kind: rawbtf.KindStruct, Name: "nf_conn", SizeType: 4,
		Members: []rawbtf.Member{{Name: "status", Type: 1}}}); err != nil {
		tb.Fatal(err)
	}
	return enc.Bytes()
}

// ArFile builds an ar archive as dpkg-deb writes it.
func ArFile(members ...Section) []byte {
	b := []byte("!<arch>\n")
	for _, m := range members {
		b = append(b, fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10d`\n", m.Name, 0, 0, 0, "100644", len(m.Data))...)
		b = append(b, m.Data...)
		if len(m.Data)%2 == 1 {
			b = append(b, '\n')
		}
	}
	return b
}

// Tar builds a tarball of regular files, in order.
func Tar(members ...Section) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, m := range members {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: m.Name, Mode: 0o644, Size: int64(len(m.Data))})
		tw.Write(m.Data)
	}
	tw.Close()
	return b.Bytes()
}

// TarGz builds a .tar.gz of regular files.
func TarGz(tb testing.TB, members ...Section) []byte {
	return Compressors["gzip"](tb, Tar(members...))
}

// MakeDeb builds a kernel package: an arm64 kernel image (Image.gz of the
// synthetic vmlinux), one module with split BTF over it, and one module of a
// release the package has no image for.
func MakeDeb(tb testing.TB) []byte {
	tb.Helper()
	control := "Package: linux-image-6.99.0-7-test\nVersion: 6.99.1-1\nArchitecture: arm64\nDescription: test\n multi-line\n"
	mod := MakeELF(elf.EM_AARCH64, Section{".BTF", SplitBTF(tb)})
	return ArFile(
		Section{"debian-binary", []byte("2.0\n")},
		Section{"control.tar.gz", TarGz(tb, Section{"./control", []byte(control)})},
		Section{"data.tar.gz", TarGz(tb,
			Section{"./boot/vmlinuz-6.99.0-7-test", Compressors["gzip"](tb, VMLinuxELF(tb, elf.EM_AARCH64))},
			Section{"./boot/config-6.99.0-7-test", []byte("CONFIG_DEBUG_INFO_BTF=y\n")},
			Section{"./usr/lib/modules/6.99.0-7-test/kernel/net/nf_conntrack.ko.gz", Compressors["gzip"](tb, mod)},
			Section{"./lib/modules/6.99.0-7-other/kernel/x.ko", mod},
		)},
	)
}

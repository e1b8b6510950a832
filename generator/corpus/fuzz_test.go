package corpus

import (
	"bytes"
	"debug/elf"
	"os"
	"testing"
)

// FuzzBTFBlob checks the BTF header check and framing on arbitrary bytes.
func FuzzBTFBlob(f *testing.F) {
	btf := smallBTF(f)
	f.Add(btf)
	f.Add(btf[:24])
	f.Add(splitBTF(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		blob, err := btfBlob(data)
		if err != nil {
			return
		}
		if len(blob) > len(data) {
			t.Fatalf("blob of %d bytes from %d", len(blob), len(data))
		}
		parseBTF(blob, nil)
	})
}

// FuzzFindImageBTF feeds the image payload finder (ELF, bzImage, zboot,
// Image, compressed streams, raw BTF, flat scan).
func FuzzFindImageBTF(f *testing.F) {
	x86 := vmlinuxELF(f, elf.EM_X86_64)
	f.Add(x86)
	f.Add(smallBTF(f))
	f.Add(makeBzImage(compressors[formatGzip](f, x86)))
	f.Add(makeBzImage(withSize(compressors[formatLZ4Legacy](f, x86), len(x86))))
	f.Add(makeBzImage(withSize(compressors[formatZstd](f, x86), len(x86))))
	f.Add(makeZboot(compressors[formatGzip](f, x86), "gzip", len(x86)))
	flat := make([]byte, 128)
	copy(flat[56:], "ARM\x64")
	f.Add(append(flat, smallBTF(f)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := findImageBTF(data)
		if err != nil {
			return
		}
		if _, err := parseBTF(img.BTF, nil); err != nil {
			t.Fatalf("found BTF that does not parse: %v", err)
		}
	})
}

// FuzzReadBTF feeds ReadBTF's reader (compression, BTFHub tarball, ELF
// vmlinux or module, raw BTF, kernel images): errors, never panics, and
// the BTF it returns is whole.
func FuzzReadBTF(f *testing.F) {
	// Small seeds with the structure of each form, so that mutations are
	// cheap: a compressed module, raw split BTF, a vmlinux, a BTFHub
	// archive.
	ko := makeELF(elf.EM_X86_64, elfSec{".BTF", splitBTF(f)})
	f.Add(compressors[formatXZ](f, ko))
	f.Add(compressors[formatZstd](f, ko))
	f.Add(splitBTF(f))
	f.Add(vmlinuxELF(f, elf.EM_X86_64))
	f.Add(tarXZ(f, elfSec{"6.1.0-1-amd64.btf", smallBTF(f)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := fileBTF(data)
		if err != nil {
			return
		}
		if _, err := btfBlob(file.BTF); err != nil {
			t.Fatalf("returned BTF has a bad header: %v", err)
		}
	})
}

// FuzzTarMemberBTF feeds the BTFHub archive's tar reader.
func FuzzTarMemberBTF(f *testing.F) {
	f.Add(unxzNoTB(tarXZ(f, elfSec{"6.1.0-1-amd64.btf", smallBTF(f)})))
	f.Add(unxzNoTB(tarXZ(f, elfSec{"README", []byte("x")})))
	f.Add(unxzNoTB(tarXZ(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		tarMemberBTF(data)
	})
}

// FuzzReadDeb feeds the package reader (ar, control and data tarballs,
// modules).
func FuzzReadDeb(f *testing.F) {
	f.Add(makeDeb(f))
	f.Add(arFile(elfSec{"debian-binary", []byte("2.0\n")}, elfSec{"data.tar", []byte("x")}))
	f.Fuzz(func(t *testing.T, data []byte) {
		readDeb(bytes.NewReader(data), 1)
	})
}

// FuzzLZO feeds the LZO1X block decoder and the lzop container reader.
func FuzzLZO(f *testing.F) {
	lzo, err := os.ReadFile("testdata/virtio_net.ko.lzo")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(lzo[:4096])
	f.Add([]byte{0x11, 0, 0})
	f.Add([]byte{0x15, 'a', 'b', 'c', 'd', 0x20, 0x04, 0x00, 0x11, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeLZO1X(data, nil, 1<<20)
		decompressT(append([]byte("\x89LZO\x00\r\n\x1a\n"), data...), formatLZO)
	})
}

package extract

import (
	"bytes"
	"cmp"
	"debug/elf"
	"os"
	"slices"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

// FuzzBTFBlob checks the BTF header check and framing on arbitrary bytes.
func FuzzBTFBlob(f *testing.F) {
	btf := extracttest.SmallBTF(f)
	f.Add(btf)
	f.Add(btf[:24])
	f.Add(extracttest.SplitBTF(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		blob, err := BtfBlob(data)
		if err != nil {
			return
		}
		if len(blob) > len(data) {
			t.Fatalf("blob of %d bytes from %d", len(blob), len(data))
		}
		ParseBTF(blob, nil)
	})
}

// FuzzFindImageBTF feeds the image payload finder (ELF, bzImage, zboot,
// Image, compressed streams, raw BTF, flat scan).
func FuzzFindImageBTF(f *testing.F) {
	x86 := extracttest.VMLinuxELF(f, elf.EM_X86_64)
	f.Add(x86)
	f.Add(extracttest.SmallBTF(f))
	f.Add(extracttest.MakeBzImage(extracttest.Compressors[FormatGzip](f, x86)))
	f.Add(extracttest.MakeBzImage(extracttest.WithSize(extracttest.Compressors[FormatLZ4Legacy](f, x86), len(x86))))
	f.Add(extracttest.MakeBzImage(extracttest.WithSize(extracttest.Compressors[FormatZstd](f, x86), len(x86))))
	f.Add(extracttest.MakeZboot(extracttest.Compressors[FormatGzip](f, x86), "gzip", len(x86)))
	flat := make([]byte, 128)
	copy(flat[56:], "ARM\x64")
	f.Add(append(flat, extracttest.SmallBTF(f)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := FindImageBTF(data)
		if err != nil {
			return
		}
		if _, err := ParseBTF(img.BTF, nil); err != nil {
			t.Fatalf("found BTF that does not parse: %v", err)
		}
	})
}

// FuzzReadDeb feeds the package reader (ar, control and data tarballs,
// modules).
func FuzzReadDeb(f *testing.F) {
	f.Add(extracttest.MakeDeb(f))
	f.Add(extracttest.ArFile(extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")}, extracttest.Section{Name: "data.tar", Data: []byte("x")}))
	f.Fuzz(func(t *testing.T, data []byte) {
		ReadDeb(bytes.NewReader(data), 1)
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
		decompressT(append([]byte("\x89LZO\x00\r\n\x1a\n"), data...), FormatLZO)
	})
}

// FuzzReadRPM feeds the RPM reader: the lead and header limits, the
// headers (FuzzRPMHeader fuzzes their reader alone), the payload
// decoders, cpio and the modules. Its seeds (testdata/fuzz/FuzzReadRPM)
// are packages rpmbuild made around a synthetic module, with gzip and
// zstd payloads, and cut or patched copies of them.
func FuzzReadRPM(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := OpenRPM(bytes.NewReader(data))
		if err != nil {
			return
		}
		p.ReadKernelFiles(1)
	})
}

// FuzzRPMHeader feeds the RPM header reader (rpmheader.go) and the tags
// taken from it. Whatever parses must index only data inside its store,
// one entry's data clear of every other's. Its seeds
// (testdata/fuzz/FuzzRPMHeader) are the signature and main headers of
// packages rpmbuild made (TestRPMHeaderSeeds rewrites them).
func FuzzRPMHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tags, err := parseRPMTags(data, "header", maxRPMTags, maxRPMData)
		if err != nil {
			return
		}
		if len(tags.store) > len(data) {
			t.Fatalf("a %d-byte store in %d bytes", len(tags.store), len(data))
		}
		byOffset := slices.SortedFunc(slices.Values(tags.entries), func(a, b rpmEntry) int {
			return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.end, b.end))
		})
		end := 0
		for _, e := range byOffset {
			if e.off < end || e.end < e.off || e.end > len(tags.store) {
				t.Fatalf("tag %d's data [%d, %d) in a %d-byte store, after data ending at %d", e.tag, e.off, e.end, len(tags.store), end)
			}
			end = e.end
		}
		readRPMHeader(tags)
		checkHeaderDigest(tags, data)
	})
}

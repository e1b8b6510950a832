package extract

import (
	"bytes"
	"debug/elf"
	"errors"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

func TestFindImageBTFSynthetic(t *testing.T) {
	btf := extracttest.SmallBTF(t)
	x86 := extracttest.VMLinuxELF(t, elf.EM_X86_64)
	arm := extracttest.VMLinuxELF(t, elf.EM_AARCH64)
	flatArm := make([]byte, 4096)
	copy(flatArm[56:], "ARM\x64")
	flatArm = append(append(flatArm, extracttest.Banner...), btf...)
	flatArm = append(flatArm, make([]byte, 100)...)

	type tc struct {
		name  string
		image []byte
		arch  string
	}
	tests := []tc{
		{"ELF x86_64", x86, "x86_64"},
		{"ELF arm64", arm, "arm64"},
		{"raw BTF", btf, ""},
		{"arm64 Image", flatArm, "arm64"},
		{"arm64 Image.gz", extracttest.Compressors[FormatGzip](t, flatArm), "arm64"},
		{"zboot gzip", extracttest.MakeZboot(extracttest.Compressors[FormatGzip](t, flatArm), "gzip", len(flatArm)), "arm64"},
		{"zboot zstd", extracttest.MakeZboot(extracttest.Compressors[FormatZstd](t, flatArm), "zstd22", len(flatArm)), "arm64"},
		{"btf.xz", extracttest.Compressors[FormatXZ](t, btf), ""},
	}
	for _, format := range []string{FormatGzip, FormatXZ, FormatLZMA, FormatZstd, FormatLZ4Legacy, FormatBzip2, FormatLZO} {
		tests = append(tests, tc{"bzImage " + format, nil, "x86_64"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			image := tt.image
			if format, ok := strings.CutPrefix(tt.name, "bzImage "); ok {
				payload := extracttest.Compressors[format](t, x86)
				if format != FormatGzip {
					payload = extracttest.WithSize(payload, len(x86))
				}
				image = extracttest.MakeBzImage(payload)
			}
			img, err := FindImageBTF(image)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img.BTF, btf) {
				t.Errorf("BTF differs")
			}
			if img.Arch != tt.arch {
				t.Errorf("arch %q, want %q", img.Arch, tt.arch)
			}
			if tt.arch != "" && img.Banner != (BannerInfo{"6.99.0-7-test", "debian", "12", "+deb12"}) {
				t.Errorf("banner %+v", img.Banner)
			}
		})
	}
}

func TestFindImageBTFErrors(t *testing.T) {
	btf := extracttest.SmallBTF(t)
	noBTF := extracttest.MakeELF(elf.EM_X86_64, extracttest.Section{Name: ".rodata", Data: []byte(extracttest.Banner)})
	lzo := extracttest.MakeBzImage(extracttest.WithSize([]byte("\x89LZO\x00\r\n\x1a\n rest of an lzop stream"), 100))
	badPayload := extracttest.MakeBzImage([]byte("not compressed at all"))
	outside := extracttest.MakeBzImage(extracttest.Compressors[FormatGzip](t, noBTF))
	outside = outside[:len(outside)-10]
	tests := []struct {
		name  string
		image []byte
		is    error
		want  string
	}{
		{"ELF without .BTF", noBTF, ErrNoBTF, "CONFIG_DEBUG_INFO_BTF"},
		{"bzImage without BTF", extracttest.MakeBzImage(extracttest.Compressors[FormatGzip](t, noBTF)), ErrNoBTF, "bzImage payload (gzip)"},
		// A kernel image without BTF: the error names the DWARF route.
		{"bzImage without BTF, the way out", extracttest.MakeBzImage(extracttest.Compressors[FormatGzip](t, noBTF)), ErrNoBTF, "imported from its DWARF instead"},
		{"flat image without BTF", append(make([]byte, 4096), extracttest.Banner...), ErrUnknownFormat, ""},
		{"arm64 Image without BTF", func() []byte { b := make([]byte, 4096); copy(b[56:], "ARM\x64"); return b }(), ErrNoBTF, "debug package"},
		{"corrupt lzo payload", lzo, nil, "lzo: header: truncated"},
		{"unknown payload", badPayload, ErrUnknownFormat, "bzImage payload compression"},
		{"payload outside file", outside, nil, "outside the"},
		{"truncated xz", extracttest.Compressors[FormatXZ](t, btf)[:40], nil, "xz"},
		{"raw BTF with trailing bytes", append(bytes.Clone(btf), 1, 2, 3), nil, "3 bytes after the BTF blob"},
		{"truncated raw BTF", btf[:len(btf)-1], nil, "BTF header: "},
		{"empty", nil, ErrUnknownFormat, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FindImageBTF(tt.image)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

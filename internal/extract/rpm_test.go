package extract

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// realModules are the x86_64 modules of the shared corpus, as a package
// installs them, by install path.
func realModules(tb testing.TB, release string) []extracttest.Section {
	tb.Helper()
	dir := filepath.Join(kerneltest.SharedCorpus(tb), "modules", "x86_64", release)
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var files []extracttest.Section
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, extracttest.Section{Name: "/lib/modules/" + release + "/kernel/drivers/" + e.Name(), Data: data})
	}
	return files
}

// TestReadRPMPayloads builds a kernel-modules package of the shared
// corpus's real .ko.xz modules with each payload compression rpm writes,
// and reads it back: every module's BTF must equal the one read from its
// file, and the header must name the package and its compression.
func TestReadRPMPayloads(t *testing.T) {
	const release = "6.12.118+deb12-amd64"
	mods := realModules(t, release)
	want := map[string][]byte{}
	for _, m := range mods {
		btf, err := ModuleBTF(filepath.Base(m.Name), m.Data)
		if err != nil {
			t.Fatal(err)
		}
		want[strings.TrimPrefix(m.Name, "/")] = btf
	}
	for _, comp := range slices.Sorted(maps.Keys(extracttest.RPMPayloads)) {
		t.Run(comp, func(t *testing.T) {
			if testing.Short() && comp != FormatGzip {
				t.Skip("-short: gzip only (rpmbuild takes seconds per package with the others)")
			}
			pkgs := extracttest.MakeRPMs(t, extracttest.RPMBuild{Source: "kernel", Version: "6.12.118", Release: "1.el9", Arch: "x86_64",
				Payload: extracttest.RPMPayloads[comp], Packages: map[string][]extracttest.Section{"kernel-modules": mods}})
			f, err := os.Open(pkgs["kernel-modules"])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := OpenRPM(f)
			if err != nil {
				t.Fatal(err)
			}
			h := p.Header
			if h.Name != "kernel-modules" || h.Version != "6.12.118" || h.Release != "1.el9" || h.Arch != "x86_64" ||
				h.Compressor != comp || !strings.HasPrefix(h.SourceRPM, "kernel-6.12.118-1.el9.src.rpm") {
				t.Errorf("header %+v", h)
			}
			files, err := p.ReadKernelFiles(2)
			if err != nil {
				t.Fatal(err)
			}
			if len(files.Images) != 0 || len(files.Modules) != len(want) {
				t.Fatalf("%d images, %d modules, want 0 and %d", len(files.Images), len(files.Modules), len(want))
			}
			for _, m := range files.Modules {
				if m.Err != nil || m.Release != release || !bytes.Equal(m.BTF, want[m.Path]) {
					t.Errorf("module %s (%s, release %s, err %v): BTF differs from its file's", m.Name, m.Path, m.Release, m.Err)
				}
			}
		})
	}
}

// smallRPM is a kernel-modules package holding one synthetic module, the
// base of the malformed packages below.
func smallRPM(tb testing.TB, payload string) []byte {
	tb.Helper()
	mod := extracttest.MakeELF(elf.EM_X86_64, extracttest.Section{Name: ".BTF", Data: extracttest.SplitBTF(tb)})
	pkgs := extracttest.MakeRPMs(tb, extracttest.RPMBuild{Source: "kernel", Version: "6.99.0", Release: "7.el9", Arch: "x86_64", Payload: payload,
		Packages: map[string][]extracttest.Section{"kernel-modules": {{Name: "/lib/modules/6.99.0-7.el9.x86_64/kernel/m.ko", Data: mod}}}})
	b, err := os.ReadFile(pkgs["kernel-modules"])
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestReadRPMErrors reads malformed packages: each gives an error saying
// what is wrong, within bounded memory, and never a panic.
func TestReadRPMErrors(t *testing.T) {
	good := smallRPM(t, "w9.gzdio")
	header, payload := extracttest.RPMLayout(good)
	patch := func(off int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.BigEndian.PutUint32(b[off:], v)
		return b
	}
	flipped := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x55
		return b
	}
	noSHA256 := func(b []byte) []byte {
		sig, _ := rpmHeaders(b)
		binary.BigEndian.PutUint32(b[96+rpmIndexEntry(t, sig, rpmSigTagSHA256):], rpmSigTagSHA256+100)
		return b
	}
	withPayload := func(p []byte) []byte { return append(bytes.Clone(good[:payload]), p...) }
	gz := func(data []byte) []byte { return extracttest.Compressors[FormatGzip](t, data) }
	// A newc cpio entry claiming a name of 0xfffffff0 bytes.
	hugeName := []byte("070701" + strings.Repeat("00000000", 11) + "fffffff0" + "00000000" + "x\x00")
	tests := []struct {
		name string
		data []byte
		is   error
		want string
	}{
		{"not an RPM", []byte("!<arch>\nhello"), ErrUnknownFormat, "not an RPM package"},
		{"truncated lead", good[:50], nil, "rpm lead: unexpected EOF"},
		{"signature tags", patch(96+8, 0x0fffffff), ErrTooLarge, "signature header: 268435455 tags"},
		{"signature data", patch(96+12, 0xfffffff0), ErrTooLarge, "signature header: 4294967280 bytes"},
		{"header tags", patch(header+8, 0x00100000), ErrTooLarge, "rpm header: 1048576 tags"},
		{"header data", patch(header+12, 0x7fffffff), ErrTooLarge, "rpm header: 2147483647 bytes"},
		{"bad header magic", patch(header, 0x12345678), nil, "rpm header: bad magic"},
		{"truncated signature", good[:96+20], nil, "rpm signature header: unexpected EOF"},
		{"truncated header", good[:header+100], nil, "rpm header: "},
		// A signature tag's data offset past its data: go-rpmutils, the
		// reader before rpmheader.go, sliced out of range.
		{"tag offset", patch(96+16+8, 0x7ffffff0), nil, "rpm signature header: tag 62: data offset 2147483632 past"},
		{"header SHA-256", flipped(header + 16 + 8), nil, "rpm header: SHA-256 mismatch: the signature header (tag 273) says"},
		// Without a SHA-256, the SHA-1 is checked.
		{"header SHA-1", noSHA256(flipped(header + 16 + 8)), nil, "rpm header: SHA-1 mismatch: the signature header (tag 269) says"},
		{"truncated payload", good[:payload+(len(good)-payload)/2], nil, "rpm payload"},
		{"payload not gzip", withPayload([]byte("070701 plain cpio")), nil, "rpm payload: gzip"},
		{"cpio name size", withPayload(gz(hugeName)), nil, "cpio: invalid cpio header"},
		{"no cpio trailer", withPayload(gz(nil)), nil, "rpm payload: cpio: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := OpenRPM(bytes.NewReader(tt.data))
			if err == nil {
				_, err = p.ReadKernelFiles(1)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("error %v, want one saying %q (wrapping %v)", err, tt.want, tt.is)
			}
		})
	}
}

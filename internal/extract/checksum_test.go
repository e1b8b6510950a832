package extract

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// checksumRelease is the release of the shared corpus's x86-64 modules,
// the real files the packages below hold.
const checksumRelease = "6.12.118+deb12-amd64"

// realModule returns a module of the shared corpus as shipped (arm64:
// .ko, x86_64: .ko.xz) and as an uncompressed ELF file.
func realModule(tb testing.TB, arch, release, name string) (shipped, elfFile []byte) {
	tb.Helper()
	dir := filepath.Join(kerneltest.SharedCorpus(tb), "modules", arch, release)
	for _, file := range []string{name + ".ko", name + ".ko.xz"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		if !strings.HasSuffix(file, ".xz") {
			return b, b
		}
		e, release, err := Decompress(b, FormatXZ, MaxImage)
		if err != nil {
			tb.Fatal(err)
		}
		defer release()
		return b, bytes.Clone(e)
	}
	tb.Fatalf("no module %s in %s", name, dir)
	return nil, nil
}

// checksumFiles are the files of the packages below, by install path: the
// corpus's real x86-64 nvme module shipped (.ko.xz), and uncompressed as
// a debug vmlinux and a debug module.
func checksumFiles(tb testing.TB) []extracttest.Section {
	shipped, elfFile := realModule(tb, "x86_64", checksumRelease, "nvme")
	return []extracttest.Section{
		{Name: "lib/modules/" + checksumRelease + "/kernel/drivers/nvme.ko.xz", Data: shipped},
		{Name: "usr/lib/debug/boot/vmlinux-" + checksumRelease, Data: elfFile},
		{Name: "usr/lib/debug/lib/modules/" + checksumRelease + "/kernel/drivers/nvme.ko", Data: elfFile},
	}
}

// debReaders are the readers of a .deb, each reading all it reads of a
// package: control.tar, data.tar or both (members).
var debReaders = []struct {
	name    string
	members string
	read    func(t *testing.T, deb []byte) error
}{
	{"ReadDeb", "control.tar data.tar", func(t *testing.T, deb []byte) error {
		_, err := ReadDeb(bytes.NewReader(deb), 2)
		return err
	}},
	{"ReadDebDWARF", "control.tar data.tar", func(t *testing.T, deb []byte) error {
		_, err := ReadDebDWARF(bytes.NewReader(deb), DWARFOptions{Dir: t.TempDir()})
		return err
	}},
	{"DebFiles", "data.tar", func(t *testing.T, deb []byte) error {
		return DebFiles(bytes.NewReader(deb), func(string) bool { return true }, func(string, []byte) error { return nil })
	}},
	{"ReadDebControl", "control.tar", func(t *testing.T, deb []byte) error {
		_, err := ReadDebControl(bytes.NewReader(deb))
		return err
	}},
}

// TestDebChecksums reads packages dpkg-deb made around real modules, each
// with one compressed member corrupt or cut short where only the stream's
// checksum, size or end tells: past the tarball's end, which the readers
// once stopped at, importing corrupt contents as good. Every reader of
// the member must fail, naming it.
func TestDebChecksums(t *testing.T) {
	control := "Package: linux-image-" + checksumRelease + "-dbg\nVersion: 6.12.118-1\nArchitecture: amd64\nMaintainer: btfembed tests <test@example.org>\nDescription: test\n"
	files := checksumFiles(t)
	var mu sync.Mutex
	debs := map[string][]byte{}
	deb := func(t *testing.T, compression string) []byte {
		mu.Lock()
		defer mu.Unlock()
		if debs[compression] == nil {
			debs[compression] = extracttest.DpkgDeb(t, control, compression, files...)
		}
		return debs[compression]
	}
	tests := []struct {
		name        string
		compression string // dpkg-deb -Z
		member      string // the member changed
		change      func(t *testing.T, b []byte) []byte
		want        string // in the error, after the member's name
	}{
		{"gzip CRC-32", "gzip", "data.tar.gz", flipByte(-8), "gzip: invalid checksum"},
		{"gzip size", "gzip", "data.tar.gz", flipByte(-1), "gzip: invalid checksum"},
		{"gzip cut short", "gzip", "data.tar.gz", cutBytes(4), "gzip: unexpected EOF"},
		{"xz without its last byte", "xz", "data.tar.xz", cutBytes(1), "xz: data is truncated or corrupt"},
		{"xz block check", "xz", "data.tar.xz", xzFlipBlockCheck, "xz: data is corrupt"},
		{"xz index", "xz", "data.tar.xz", xzFlipIndex, "xz: data is corrupt"},
		{"zstd checksum", "zstd", "data.tar.zst", flipByte(-1), "zstd: CRC check failed"},
		{"zstd cut short", "zstd", "data.tar.zst", cutBytes(4), "zstd: unexpected EOF"},
		{"bzip2 stream CRC", "gzip", "data.tar.bz2", bzip2FlipStreamCRC, "bzip2 data invalid: file checksum mismatch"},
		{"control gzip CRC-32", "gzip", "control.tar.gz", flipByte(-8), "gzip: invalid checksum"},
		{"control xz without its last byte", "xz", "control.tar.xz", cutBytes(1), "xz: data is truncated or corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := deb(t, tt.compression)
			members := extracttest.ArMembers(t, good)
			changed := false
			for i, m := range members {
				if m.Name == tt.member {
					members[i].Data, changed = tt.change(t, m.Data), true
				} else if strings.TrimSuffix(m.Name, ".gz")+".bz2" == tt.member {
					members[i] = extracttest.Section{Name: tt.member, Data: tt.change(t, gzipToBzip2(t, m.Data))}
					changed = true
				}
			}
			if !changed {
				t.Fatalf("no member %s in the package", tt.member)
			}
			bad := extracttest.ArFile(members...)
			for _, r := range debReaders {
				if kind, _, _ := strings.Cut(tt.member, "."); !strings.Contains(r.members, kind+".tar") {
					continue
				}
				if err := r.read(t, good); err != nil {
					t.Fatalf("%s of the good package: %v", r.name, err)
				}
				err := r.read(t, bad)
				if err == nil || !strings.Contains(err.Error(), tt.member+": ") || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: error %v, want one naming %s and saying %q", r.name, err, tt.member, tt.want)
				}
			}
		})
	}
}

// TestRPMChecksums reads packages rpmbuild made around real modules, each
// with its payload changed where only the compressed stream's checksum
// or end, or the header's payload digest (RPMTAG_PAYLOADDIGEST), tells.
// Where the stream is what is tested, the payload digest is made to match
// the changed payload (extracttest.RPMSetPayload), as a crafted package
// would have it; where the digest is tested, the stream decodes as good.
func TestRPMChecksums(t *testing.T) {
	files := checksumFiles(t)
	for i := range files {
		files[i].Name = "/" + files[i].Name
	}
	files[1].Name = "/usr/lib/debug/lib/modules/" + checksumRelease + "/vmlinux"
	var mu sync.Mutex
	rpms := map[string][]byte{}
	rpm := func(t *testing.T, compression string) []byte {
		mu.Lock()
		defer mu.Unlock()
		if rpms[compression] == nil {
			pkgs := extracttest.MakeRPMs(t, extracttest.RPMBuild{Source: "kernel", Version: "6.12.118", Release: "1.el9", Arch: "x86_64",
				Payload: extracttest.RPMPayloads[compression], Packages: map[string][]extracttest.Section{"kernel-debuginfo": files}})
			b, err := os.ReadFile(pkgs["kernel-debuginfo"])
			if err != nil {
				t.Fatal(err)
			}
			rpms[compression] = b
		}
		return rpms[compression]
	}
	tests := []struct {
		name        string
		compression string // the payload's
		change      func(t *testing.T, b []byte) []byte
		digest      bool   // the payload digest is left as it was, not made to match
		want        string // in the error, after ""
	}{
		{"gzip CRC-32", "gzip", flipByte(-8), false, "gzip: invalid checksum"},
		{"gzip size", "gzip", flipByte(-1), false, "gzip: invalid checksum"},
		{"gzip trailing bytes", "gzip", func(t *testing.T, b []byte) []byte { return append(bytes.Clone(b), "junk"...) }, false, "gzip: "},
		// The gzip header's modification time: no decoder checks it.
		{"payload digest", "gzip", func(t *testing.T, b []byte) []byte { b = bytes.Clone(b); b[4]++; return b }, true, "payload digest (algorithm 8, tag 5092) mismatch"},
		{"xz without its last byte", "xz", cutBytes(1), false, "xz: data is truncated or corrupt"},
		{"xz block check", "xz", xzFlipBlockCheck, false, "xz: data is corrupt"},
		{"zstd cut short", "zstd", cutBytes(4), false, "zstd: unexpected EOF"},
		{"bzip2 stream CRC", "bzip2", bzip2FlipStreamCRC, false, "bzip2 data invalid: file checksum mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && tt.compression != FormatGzip {
				t.Skip("-short: gzip only (rpmbuild takes seconds per package with the others)")
			}
			good := rpm(t, tt.compression)
			_, start := extracttest.RPMLayout(good)
			payload := tt.change(t, good[start:])
			bad := extracttest.RPMSetPayload(t, good, payload)
			if tt.digest {
				bad = append(bytes.Clone(good[:start]), payload...)
			}
			for _, pkg := range []struct {
				name string
				data []byte
				ok   bool
			}{{"good", good, true}, {"changed", bad, false}} {
				for _, read := range []struct {
					name string
					read func(p *RPM) error
				}{
					{"ReadKernelFiles", func(p *RPM) error { _, err := p.ReadKernelFiles(2); return err }},
					{"ReadDWARF", func(p *RPM) error { _, _, err := p.ReadDWARF(DWARFOptions{Dir: t.TempDir()}); return err }},
				} {
					p, err := OpenRPM(bytes.NewReader(pkg.data))
					if err != nil {
						t.Fatal(err)
					}
					err = read.read(p)
					if pkg.ok && err != nil {
						t.Fatalf("%s of the %s package: %v", read.name, pkg.name, err)
					}
					if !pkg.ok && (err == nil || !strings.HasPrefix(err.Error(), "rpm payload: ") || !strings.Contains(err.Error(), tt.want)) {
						t.Errorf("%s: error %v, want one of the payload saying %q", read.name, err, tt.want)
					}
				}
			}
		})
	}
}

// flipByte changes the byte at off from the end.
func flipByte(off int) func(*testing.T, []byte) []byte {
	return func(_ *testing.T, b []byte) []byte {
		b = bytes.Clone(b)
		b[len(b)+off] ^= 0x55
		return b
	}
}

// cutBytes drops the last n bytes.
func cutBytes(n int) func(*testing.T, []byte) []byte {
	return func(_ *testing.T, b []byte) []byte { return bytes.Clone(b[:len(b)-n]) }
}

// xzIndex returns where an xz stream's index starts and the size of its
// blocks' check field, from the stream footer (the .xz file format,
// 2.1.2.4: CRC32, Backward Size, Stream Flags, "YZ") and the header's
// Stream Flags (2.1.1.2: the check's ID, 2.1.1.2's sizes).
func xzIndex(t *testing.T, b []byte) (index, checkSize int) {
	t.Helper()
	if len(b) < 24 || string(b[len(b)-2:]) != "YZ" {
		t.Fatal("not one whole xz stream")
	}
	backward := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	index = len(b) - 12 - (backward+1)*4
	switch id := b[7] & 0x0f; id {
	case 0x01:
		checkSize = 4
	case 0x04:
		checkSize = 8
	case 0x0a:
		checkSize = 32
	default:
		t.Fatalf("xz check ID %#x", id)
	}
	return index, checkSize
}

// xzFlipBlockCheck changes the last block's check (CRC64 as xz writes
// it), which ends where the index starts.
func xzFlipBlockCheck(t *testing.T, b []byte) []byte {
	index, size := xzIndex(t, b)
	b = bytes.Clone(b)
	b[index-size] ^= 0x55
	return b
}

// xzFlipIndex changes the unpadded size of the index's last record,
// which its CRC32 covers.
func xzFlipIndex(t *testing.T, b []byte) []byte {
	index, _ := xzIndex(t, b)
	b = bytes.Clone(b)
	b[index+2] ^= 0x01
	return b
}

// bzip2FlipStreamCRC changes the stream's combined CRC: the 32 bits
// before the last byte's padding, after the end-of-stream magic.
func bzip2FlipStreamCRC(_ *testing.T, b []byte) []byte {
	b = bytes.Clone(b)
	b[len(b)-2] ^= 0x55
	return b
}

// gzipToBzip2 recompresses a gzip stream with the bzip2 command, which
// makes what dpkg-deb no longer writes (dpkg-deb -Zbzip2 is refused).
func gzipToBzip2(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return extracttest.Compressors[FormatBzip2](t, plain)
}

// TestRPMPayloadDigestAlgorithm: a payload digest this reader cannot
// check (an algorithm it does not take, a digest of the wrong length for
// its algorithm) refuses the package rather than read it as checked. The
// package is rpmbuild's with its RPMTAG_PAYLOADDIGESTALGO changed and
// the header's own digest made to match (extracttest.RPMSetPayload).
func TestRPMPayloadDigestAlgorithm(t *testing.T) {
	good := smallRPM(t, "w9.gzdio")
	header, start := extracttest.RPMLayout(good)
	withAlgo := func(algo uint32) []byte {
		b := bytes.Clone(good)
		be := binary.BigEndian
		entries := int(be.Uint32(b[header+8:]))
		for i := range entries {
			e := b[header+16+i*16:]
			if be.Uint32(e) == 5093 {
				be.PutUint32(b[header+16+entries*16+int(be.Uint32(e[8:])):], algo)
				return extracttest.RPMSetPayload(t, b, b[start:])
			}
		}
		t.Fatal("no RPMTAG_PAYLOADDIGESTALGO")
		return nil
	}
	for _, tt := range []struct {
		algo uint32
		want string // "" for none
	}{
		{8, ""},
		{2, "rpm header: payload digest algorithm 2, none this reader checks"},
		{10, "is not a digest of algorithm 10"},
	} {
		p, err := OpenRPM(bytes.NewReader(withAlgo(tt.algo)))
		if err == nil {
			_, err = p.ReadKernelFiles(1)
		}
		if (tt.want == "" && err != nil) || (tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want))) {
			t.Errorf("algorithm %d: error %v, want %q", tt.algo, err, tt.want)
		}
	}
}

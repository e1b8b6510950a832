package corpus

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/btfembed/btfembed/internal/btfhub"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/pathelem"
)

// The reproducers of hostile inputs (issue 9) are built here, never
// committed: a few hundred KB of compressed zeros stand for gigabytes.

// zeros reads n zero bytes.
func zeros(n int64) io.Reader { return io.LimitReader(zeroReader{}, n) }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

var bombs sync.Map // format and size -> []byte

// bomb compresses n zero bytes in the given format (xz with the xz
// command, as the reproducer did; zstd as a stream, so the frame
// has no content size), once per test binary.
func bomb(tb testing.TB, format string, n int64) []byte {
	tb.Helper()
	key := fmt.Sprint(format, n)
	if b, ok := bombs.Load(key); ok {
		return b.([]byte)
	}
	var out bytes.Buffer
	switch format {
	case extract.FormatXZ:
		xz, err := exec.LookPath("xz")
		if err != nil {
			tb.Skip("xz not installed")
		}
		cmd := exec.Command(xz, "-0", "-T1", "-c")
		cmd.Stdin, cmd.Stdout = zeros(n), &out
		if err := cmd.Run(); err != nil {
			tb.Fatal(err)
		}
	case extract.FormatZstd:
		w, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := io.Copy(w, zeros(n)); err != nil {
			tb.Fatal(err)
		}
		w.Close()
	case extract.FormatGzip:
		w, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
		if _, err := io.Copy(w, zeros(n)); err != nil {
			tb.Fatal(err)
		}
		w.Close()
	default:
		tb.Fatalf("no bomb for %s", format)
	}
	bombs.Store(key, out.Bytes())
	return out.Bytes()
}

// compressedSectionELF is a module whose .BTF is SHF_COMPRESSED: an
// Elf64_Chdr claiming size bytes (zstd), then data.
func compressedSectionELF(size uint64, data []byte) []byte {
	chdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(chdr, uint32(elf.COMPRESS_ZSTD))
	binary.LittleEndian.PutUint64(chdr[8:], size)
	binary.LittleEndian.PutUint64(chdr[16:], 1)
	img := extracttest.MakeELF(elf.EM_X86_64, extracttest.Section{Name: ".BTF", Data: append(chdr, data...)})
	// Section 1 is .BTF: set SHF_COMPRESSED in its header's flags.
	shoff := binary.LittleEndian.Uint64(img[0x28:])
	flags := img[shoff+64+8:]
	binary.LittleEndian.PutUint64(flags, uint64(elf.SHF_COMPRESSED))
	return img
}

// arm64Image is a flat arm64 Image: the 64-byte header ("ARM\x64" at 56),
// a small BTF, and a banner naming release.
func arm64Image(tb testing.TB, release string) []byte {
	img := make([]byte, 64)
	copy(img[56:], "ARM\x64")
	img = append(img, extracttest.SmallBTF(tb)...)
	return append(img, "Linux version "+release+" (x) #1\x00"...)
}

// debWith builds a kernel package with a good arm64 image and the given
// extra data.tar members.
func debWith(tb testing.TB, image []byte, members ...extracttest.Section) []byte {
	control := "Package: linux-image-6.99.0-7-test\nVersion: 6.99.1-1\nArchitecture: arm64\n"
	data := append([]extracttest.Section{{Name: "./boot/vmlinuz-6.99.0-7-test", Data: image}}, members...)
	return extracttest.ArFile(
		extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")},
		extracttest.Section{Name: "control.tar.gz", Data: extracttest.TarGz(tb, extracttest.Section{Name: "./control", Data: []byte(control)})},
		extracttest.Section{Name: "data.tar.gz", Data: extracttest.TarGz(tb, data...)},
	)
}

// escapeRelease walks out of any output directory.
var escapeRelease = "1/" + strings.Repeat("../", 20) + "tmp/ESCAPED"

// TestImportPathEscape imports inputs whose release, arch or module name
// would walk out of the corpus: each is skipped with an error naming the
// input and the bad string, and nothing is written outside the corpus.
func TestImportPathEscape(t *testing.T) {
	good := arm64Image(t, "6.99.0-7-test")
	for _, tc := range []struct {
		name  string
		input []byte
		file  string // the input's name
		want  string // in the skipped error
		// kernels is how many kernels are still imported.
		kernels int
	}{
		{"banner release", arm64Image(t, escapeRelease), "Image-evil", "release", 0},
		{"banner release with a dot dot", arm64Image(t, ".."), "Image-evil", "", 0},
		// A package's member name gives the release, not the banner.
		{"banner in a package", debWith(t, arm64Image(t, escapeRelease)), "evil.deb", "", 1},
		{"release from a package member name", debWith(t, good, extracttest.Section{Name: "./boot/vmlinuz-x\n..", Data: good}), "evil.deb", "release", 1},
		{"module name", debWith(t, good, extracttest.Section{Name: "./lib/modules/6.99.0-7-test/kernel/a\nb.ko", Data: extracttest.MakeELF(elf.EM_AARCH64, extracttest.Section{Name: ".BTF", Data: extracttest.SplitBTF(t)})}),
			"evil.deb", "module name", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			in := filepath.Join(t.TempDir(), tc.file)
			writeFile(t, in, tc.input)
			res, err := Import(t.Context(), out, []string{in}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Kernels) != tc.kernels {
				t.Errorf("imported %+v, want %d kernels", res.Kernels, tc.kernels)
			}
			if tc.want != "" {
				if len(res.Skipped) != 1 || !errors.Is(res.Skipped[0], pathelem.ErrUnsafe) ||
					!strings.Contains(res.Skipped[0].Error(), tc.want) || !strings.Contains(res.Skipped[0].Error(), in) {
					t.Errorf("skipped %v, want one error naming %s and the bad %s", res.Skipped, in, tc.want)
				}
			}
			if entries, _ := os.ReadDir(parent); len(entries) > 1 {
				t.Errorf("written beside the corpus: %v", entries)
			}
			if _, err := os.Stat("/tmp/ESCAPED.btf.tar.xz"); err == nil {
				t.Error("/tmp/ESCAPED.btf.tar.xz written")
			}
		})
	}
}

// TestImportLongRelease imports a kernel whose banner gives a release of
// 3,000 bytes beside a good one: a file name can hold 255, so writing it
// failed the whole import ("file name too long") after reporting nothing
// skipped. It must be skipped with its reason, the good kernel imported.
func TestImportLongRelease(t *testing.T) {
	long := "6." + strings.Repeat("a", 2998) // a banner release starts with a digit
	dir := t.TempDir()
	bad, good := filepath.Join(dir, "Image-long"), filepath.Join(dir, "Image-good")
	writeFile(t, bad, arm64Image(t, long))
	writeFile(t, good, arm64Image(t, "6.99.0-7-test"))
	out := t.TempDir()
	res, err := Import(t.Context(), out, []string{bad, good}, nil)
	if err != nil {
		t.Fatalf("import: %v, want the long release skipped", err)
	}
	if len(res.Kernels) != 1 || res.Kernels[0].Key.Release != "6.99.0-7-test" {
		t.Errorf("imported %+v, want the good kernel alone", res.Kernels)
	}
	if len(res.Skipped) != 1 || !errors.Is(res.Skipped[0], pathelem.ErrUnsafe) ||
		!strings.HasPrefix(res.Skipped[0].Error(), bad+": kernel release: ") || !strings.Contains(res.Skipped[0].Error(), "3000 bytes") {
		t.Errorf("skipped %.300v, want one error naming %s and its release's length", res.Skipped, bad)
	}
	checkNoTemp(t, out)
}

// TestWriteKernelRefusesEscape checks writeKernel's own guard, for callers
// that build a Kernel themselves.
func TestWriteKernelRefusesEscape(t *testing.T) {
	for _, k := range []*Kernel{
		{Key: kernelkey.Key{Arch: "arm64", Release: escapeRelease}},
		{Key: kernelkey.Key{Arch: "../x", Release: "6.1"}},
		{Key: kernelkey.Key{Arch: "arm64", Release: "6.1", Distro: "a/b"}},
		{Key: kernelkey.Key{Arch: "arm64", Release: "6.1"}, Modules: []Module{{Name: "../../m", BTF: []byte{1}}}},
	} {
		parent := t.TempDir()
		k.VMLinux = extracttest.SmallBTF(t)
		if _, err := writeKernel(filepath.Join(parent, "out"), k); !errors.Is(err, pathelem.ErrUnsafe) {
			t.Errorf("writeKernel(%v): %v, want an error wrapping pathelem.ErrUnsafe", k.Key, err)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("writeKernel(%v) wrote %v", k.Key, entries)
		}
	}
}

// TestTwoBTFMembers: a BTFHub archive with two .btf members is refused
// rather than read as its first.
func TestTwoBTFMembers(t *testing.T) {
	tarball := unxzNoTB(tarXZ(t, extracttest.Section{Name: "a.btf", Data: extracttest.SmallBTF(t)}, extracttest.Section{Name: "b.btf", Data: extracttest.SmallBTF(t)}))
	if _, err := btfhub.ReadTar(tarball); err == nil || !strings.Contains(err.Error(), "two .btf members, a.btf and b.btf") {
		t.Fatalf("error %v, want one naming both members", err)
	}
}

// TestReadTarShares checks that the BTF of a plain BTFHub archive is the
// tarball's own bytes, not a copy (4-5 MB of fresh memory per kernel),
// and that a sparse member, whose bytes are not stored as read, is read
// as archive/tar reads it.
func TestReadTarShares(t *testing.T) {
	btf := extracttest.SmallBTF(t)
	for _, format := range []tar.Format{tar.FormatUSTAR, tar.FormatPAX, tar.FormatGNU} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		h := &tar.Header{Typeflag: tar.TypeReg, Name: "6.1.0-47-amd64.btf", Mode: 0o644, Size: int64(len(btf)), Format: format}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(btf)
		tw.Close()
		tarball := b.Bytes()
		got, err := btfhub.ReadTar(tarball)
		if err != nil || !bytes.Equal(got, btf) {
			t.Fatalf("%v: ReadTar = %d bytes, %v; want the member's %d", format, len(got), err, len(btf))
		}
		if start := bytes.Index(tarball, btf); &got[0] != &tarball[start] {
			t.Errorf("%v: ReadTar returned a copy of the member", format)
		}
	}
	got, err := btfhub.ReadTar(sparseTar(t, "6.1.0-47-amd64.btf", btf))
	if want := append(make([]byte, 100), btf...); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("sparse member: ReadTar = %d bytes, %v; want its %d bytes as read", len(got), err, len(want))
	}
}

// TestModuleNotSplitOverKernel puts BTF that is not split BTF over the
// kernel in its modules directory: standalone BTF (another vmlinux) and
// split BTF over another kernel. Each is reported, naming the file.
func TestModuleNotSplitOverKernel(t *testing.T) {
	dir := t.TempDir()
	k := testKernels[0].key
	kdir := filepath.Join(dir, k.Distro, k.Version, k.Arch)
	copyFile(t, filepath.Join(testCorpus, k.Distro, k.Version, k.Arch, k.Release+".btf.tar.xz"), filepath.Join(kdir, k.Release+".btf.tar.xz"))
	mods := filepath.Join(kdir, k.Release+".modules")
	writeFile(t, filepath.Join(mods, "standalone.btf"), hubBTF(t, testKernels[1].key))
	writeFile(t, filepath.Join(mods, "other.btf"), extracttest.SplitBTF(t))
	kernels, errs := collect(t, []string{dir}, nil)
	if len(kernels) != 1 || len(kernels[0].Modules) != 0 {
		t.Fatalf("read %d kernels (%+v), errors %v; want the kernel without modules", len(kernels), kernels[0].Modules, errs)
	}
	for _, name := range []string{"standalone.btf", "other.btf"} {
		found := false
		for _, err := range errs {
			found = found || strings.Contains(err.Error(), filepath.Join(mods, name)+": split BTF over the kernel's vmlinux")
		}
		if !found {
			t.Errorf("no error for %s in %v", name, errs)
		}
	}
}

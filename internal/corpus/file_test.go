package corpus

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// testModule is a real module of a testCorpus kernel, xz-compressed as
// Debian ships it.
var testModule = struct {
	kernel kernelkey.Key
	file   string
}{testKernels[3].key, filepath.Join(extraModules(testKernels[3].key), "nvme.ko.xz")}

// TestReadBTF reads every form ReadBTF knows, laid out under a corpus
// directory so that the path tells part of the key: kernels in BTFHub,
// raw and compressed raw form, synthetic vmlinux and images, and a real
// module as an ELF and compressed three ways. The BTF must be what an
// independent extractor finds (ulikunitz/xz and archive/tar for BTFHub,
// llvm-objcopy for a module's .BTF).
func TestReadBTF(t *testing.T) {
	hubKey := testKernels[2].key
	hub := hubBTF(t, hubKey)
	small := extracttest.SmallBTF(t)
	x86 := extracttest.VMLinuxELF(t, elf.EM_X86_64)
	flatArm := make([]byte, 4096)
	copy(flatArm[56:], "ARM\x64")
	flatArm = append(append(flatArm, extracttest.Banner...), small...)
	ko := readTestModule(t, testModule.file)
	koBTF := objcopySection(t, ko, ".BTF")
	koXZ, err := os.ReadFile(testModule.file)
	if err != nil {
		t.Fatal(err)
	}
	banner := kernelkey.Key{Release: "6.99.0-7-test", Distro: "debian", Version: "12"}
	withArch := func(k kernelkey.Key, arch string) kernelkey.Key { k.Arch = arch; return k }

	dir := t.TempDir()
	pathKey := func(release string) kernelkey.Key {
		return kernelkey.Key{Arch: "x86_64", Release: release, Distro: "debian", Version: "12"}
	}
	for _, tc := range []struct {
		file string // under dir
		data []byte
		btf  []byte
		key  kernelkey.Key
	}{
		{"debian/12/x86_64/" + hubKey.Release + ".btf.tar.xz", hubFile(t, hubKey), hub, hubKey},
		{"debian/12/x86_64/6.99.1-raw.btf", small, small, pathKey("6.99.1-raw")},
		{"debian/12/x86_64/6.99.2-zst.btf.zst", extracttest.Compressors[extract.FormatZstd](t, small), small, pathKey("6.99.2-zst")},
		{"debian/12/x86_64/6.99.3-gz.btf.gz", extracttest.Compressors[extract.FormatGzip](t, small), small, pathKey("6.99.3-gz")},
		{"vmlinux", extracttest.VMLinuxELF(t, elf.EM_AARCH64), small, withArch(banner, "arm64")},
		{"bzImage", extracttest.MakeBzImage(extracttest.Compressors[extract.FormatGzip](t, x86)), small, withArch(banner, "x86_64")},
		{"Image.gz", extracttest.Compressors[extract.FormatGzip](t, flatArm), small, withArch(banner, "arm64")},
		{"zboot.efi", extracttest.MakeZboot(extracttest.Compressors[extract.FormatZstd](t, flatArm), "zstd22", len(flatArm)), small, withArch(banner, "arm64")},
		{"nvme.ko", ko, koBTF, kernelkey.Key{Arch: "x86_64"}},
		{"nvme.ko.xz", koXZ, koBTF, kernelkey.Key{Arch: "x86_64"}},
		{"nvme.ko.gz", extracttest.Compressors[extract.FormatGzip](t, ko), koBTF, kernelkey.Key{Arch: "x86_64"}},
		{"nvme.ko.zst", extracttest.Compressors[extract.FormatZstd](t, ko), koBTF, kernelkey.Key{Arch: "x86_64"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, filepath.FromSlash(tc.file))
			writeFile(t, path, tc.data)
			f, err := ReadBTF(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.BTF, tc.btf) {
				t.Errorf("BTF differs from the reference extraction")
			}
			if f.Base != nil {
				t.Errorf("a .BTF.base of %d bytes", len(f.Base))
			}
			if f.Key != tc.key {
				t.Errorf("key %+v, want %+v", f.Key, tc.key)
			}
		})
	}

	// The module's BTF is split BTF over its own kernel.
	f, err := ReadBTF(testModule.file)
	if err != nil {
		t.Fatal(err)
	}
	base, err := rawbtf.Parse(hubBTF(t, testModule.kernel), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rawbtf.Parse(f.BTF, base); err != nil {
		t.Errorf("%s: .BTF is not split BTF over %s: %v", testModule.file, testModule.kernel, err)
	}
}

// TestReadBTFBase builds a module the way pahole 1.28 does for out-of-tree
// modules, .BTF over a distilled .BTF.base, with objcopy from package
// distill's committed distilled nvme, and reads both sections back.
func TestReadBTFBase(t *testing.T) {
	objcopy, err := exec.LookPath("objcopy")
	if err != nil {
		t.Skip("objcopy not installed")
	}
	const (
		distilledBase  = "../../distill/testdata/nvme-6.12.118+deb12-amd64.base.btf"
		distilledSplit = "../../distill/testdata/nvme-6.12.118+deb12-amd64.split.btf"
	)
	dir := t.TempDir()
	ko := filepath.Join(dir, "nvme.ko")
	writeFile(t, ko, readTestModule(t, testModule.file))
	out := filepath.Join(dir, "nvme-distilled.ko")
	cmd := exec.Command(objcopy, "--update-section", ".BTF="+distilledSplit, "--add-section", ".BTF.base="+distilledBase, ko, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	f, err := ReadBTF(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		got  []byte
		path string
	}{{f.BTF, distilledSplit}, {f.Base, distilledBase}} {
		want, err := os.ReadFile(s.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s.got, want) {
			t.Errorf("section read back differs from %s", s.path)
		}
	}
	base, err := rawbtf.Parse(f.Base, nil)
	if err != nil {
		t.Fatalf(".BTF.base: %v", err)
	}
	if _, err := rawbtf.Parse(f.BTF, base); err != nil {
		t.Errorf(".BTF over .BTF.base: %v", err)
	}

	// Read, whose modules are split over their kernel, refuses it.
	k := testModule.kernel
	kdir := filepath.Join(dir, "corpus", k.Distro, k.Version, k.Arch)
	copyFile(t, filepath.Join(testCorpus, k.Distro, k.Version, k.Arch, k.Release+btfhubSuffix), filepath.Join(kdir, k.Release+btfhubSuffix))
	copyFile(t, out, filepath.Join(kdir, k.Release+modulesDirSuffix, "nvme.ko"))
	kernels, errs := collect(t, []string{filepath.Join(dir, "corpus")}, nil)
	if len(kernels) != 1 || len(kernels[0].Modules) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "distilled base") {
		t.Errorf("Read gave %d kernels and errors %v, want the kernel without modules and one error about the distilled base", len(kernels), errs)
	}
}

// TestReadBTFErrors checks that bad files give an error that names them
// and, where one applies, wraps the sentinel.
func TestReadBTFErrors(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ko := readTestModule(t, testModule.file)
	koXZ, err := os.ReadFile(testModule.file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte // nil: the test binary itself
		is   error  // nil: any error
	}{
		{"no .BTF", nil, errNoBTF},
		{"truncated elf", ko[:len(ko)/3], nil},
		{"truncated xz", koXZ[:len(koXZ)/2], nil},
		{"not elf", []byte("hello, world"), errUnknownFormat},
		{"empty", []byte{}, errUnknownFormat},
		{"missing", nil, os.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			switch {
			case tc.name == "no .BTF":
				path = self
			case tc.data != nil:
				writeFile(t, path, tc.data)
			}
			f, err := ReadBTF(path)
			switch {
			case err == nil:
				t.Fatalf("no error, %d bytes of BTF", len(f.BTF))
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Errorf("error %v, want %v", err, tc.is)
			case !strings.Contains(err.Error(), path):
				t.Errorf("error %v does not name %s", err, path)
			}
		})
	}
}

// TestReadBTFFromReader reads a module from memory, as from an archive:
// the same BTF as from its file.
func TestReadBTFFromReader(t *testing.T) {
	data, err := os.ReadFile(testModule.file)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readBTFFromReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if want := objcopySection(t, readTestModule(t, testModule.file), ".BTF"); !bytes.Equal(got.BTF, want) {
		t.Error("BTF differs from the module's .BTF section")
	}
}

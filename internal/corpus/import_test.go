package corpus

import (
	"bytes"
	"debug/elf"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// readBack reads a corpus written by Import and indexes it by key.
func readBack(tb testing.TB, dir string) map[kernelkey.Key]*Kernel {
	tb.Helper()
	kernels, errs := collect(tb, []string{dir}, nil)
	if len(errs) > 0 {
		tb.Fatal(errs)
	}
	m := map[kernelkey.Key]*Kernel{}
	for _, k := range kernels {
		m[k.Key] = k
	}
	return m
}

// checkNoTemp fails if a temporary file or directory is left in dir.
func checkNoTemp(tb testing.TB, dir string) {
	tb.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp") {
			tb.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// tarMember extracts a corpus file's member with the xz and tar commands,
// as BTFHub's tools do, or returns nil without them.
func tarMember(tb testing.TB, file, member string) []byte {
	tb.Helper()
	if _, err := exec.LookPath("xz"); err != nil {
		return nil
	}
	out, err := exec.Command("tar", "-xJOf", file, member).Output()
	if err != nil {
		tb.Fatalf("tar -xJOf %s %s: %v", file, member, err)
	}
	return out
}

// TestImportImages imports each Debian image of the shared corpus (bzImages
// with xz, lz4 and zstd payloads, a flat arm64 Image): the BTF written must
// be byte-identical to the BTFHub archive of the same release, under the
// same key.
func TestImportImages(t *testing.T) {
	shared := kerneltest.SharedCorpus(t)
	var inputs []string
	for _, tk := range testKernels {
		inputs = append(inputs, filepath.Join(shared, "images", "vmlinuz-"+tk.key.Release))
	}
	out := t.TempDir()
	res, err := Import(t.Context(), out, inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) > 0 || len(res.Kernels) != len(testKernels) {
		t.Fatalf("imported %d, skipped %v", len(res.Kernels), res.Skipped)
	}
	got := readBack(t, out)
	for _, tk := range testKernels {
		k := got[tk.key]
		if k == nil {
			t.Errorf("%v not imported (got %v)", tk.key, res.Kernels)
			continue
		}
		want := hubBTF(t, tk.key)
		if !bytes.Equal(k.VMLinux, want) {
			t.Errorf("%v: imported BTF (%d bytes) differs from the BTFHub archive's (%d bytes)", tk.key, len(k.VMLinux), len(want))
		}
		if m := tarMember(t, KernelPath(out, tk.key), tk.key.Release+".btf"); m != nil && !bytes.Equal(m, want) {
			t.Errorf("%v: tar -xJ gives different bytes", tk.key)
		}
	}
	checkNoTemp(t, out)
}

// TestImportDeb imports the shared corpus's kernel package: its vmlinux BTF
// must equal the BTFHub archive's and all 1,121 modules must come with it,
// each module's BTF equal to its .ko's .BTF section.
func TestImportDeb(t *testing.T) {
	shared := kerneltest.SharedCorpus(t)
	deb := filepath.Join(shared, "packages", "linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb")
	key := testKernels[2].key
	out := t.TempDir()
	res, err := Import(t.Context(), out, []string{deb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != key {
		t.Fatalf("imported %v, skipped %v", res.Kernels, res.Skipped)
	}
	k := readBack(t, out)[key]
	if !bytes.Equal(k.VMLinux, hubBTF(t, key)) {
		t.Error("imported BTF differs from the BTFHub archive's")
	}
	const wantModules = 1121 // ../shared/corpus/README.md
	if len(k.Modules) != wantModules {
		t.Errorf("%d modules, want %d", len(k.Modules), wantModules)
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb not installed: module BTF not compared")
	}
	tree := t.TempDir()
	if msg, err := exec.Command("dpkg-deb", "-x", deb, tree).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v: %s", err, msg)
	}
	kos := map[string]string{}
	filepath.WalkDir(filepath.Join(tree, "lib/modules", key.Release), func(p string, d fs.DirEntry, err error) error {
		if name, ok := extract.ModuleName(d.Name()); ok {
			kos[name] = p
		}
		return nil
	})
	if len(kos) != len(k.Modules) {
		t.Errorf("dpkg-deb gives %d modules, import %d", len(kos), len(k.Modules))
	}
	for i, m := range k.Modules {
		if i%50 != 0 && m.Name != "nf_conntrack" {
			continue // a sample keeps llvm-objcopy runs few
		}
		ko, err := os.ReadFile(kos[m.Name])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m.BTF, objcopySection(t, ko, ".BTF")) {
			t.Errorf("module %s: BTF differs from its .BTF section", m.Name)
		}
	}
}

// TestImportInputs imports one of each small input kind and checks what
// each gives, and that the bad ones are skipped with an error naming them.
func TestImportInputs(t *testing.T) {
	in := t.TempDir()
	btf := extracttest.SmallBTF(t)
	writeFile(t, filepath.Join(in, "vmlinux"), extracttest.VMLinuxELF(t, elf.EM_AARCH64))
	writeFile(t, filepath.Join(in, "6.99.1-raw.btf"), btf)
	writeFile(t, filepath.Join(in, "garbage"), []byte("garbage"))
	hubKey := testKernels[2].key
	hub := filepath.Join(testCorpus, hubKey.Distro, hubKey.Version, hubKey.Arch, hubKey.Release+".btf.tar.xz")
	missing := filepath.Join(in, "missing")

	out := t.TempDir()
	inputs := []string{filepath.Join(in, "vmlinux"), filepath.Join(in, "6.99.1-raw.btf"), hub, filepath.Join(in, "garbage"), missing}
	res, err := Import(t.Context(), out, inputs, &ImportOptions{Key: kernelkey.Key{Arch: "riscv64"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[kernelkey.Key][]byte{
		{Arch: "riscv64", Release: "6.99.0-7-test", Distro: "debian", Version: "12"}: btf,
		{Arch: "riscv64", Release: "6.99.1-raw"}:                                     btf,
		{Arch: "riscv64", Release: hubKey.Release, Distro: "debian", Version: "12"}:  hubBTF(t, hubKey),
	}
	got := readBack(t, out)
	if len(got) != len(want) {
		t.Errorf("imported %v, want %d kernels", res.Kernels, len(want))
	}
	for k, b := range want {
		if g := got[k]; g == nil || !bytes.Equal(g.VMLinux, b) {
			t.Errorf("%v: not imported or different BTF", k)
		}
	}
	if len(res.Skipped) != 2 {
		t.Fatalf("skipped %v, want garbage and missing", res.Skipped)
	}
	for _, err := range res.Skipped {
		var ke *KernelError
		if !errors.As(err, &ke) || (ke.Path != missing && ke.Path != filepath.Join(in, "garbage")) {
			t.Errorf("skipped error %v names no input", err)
		}
	}

	t.Run("strict", func(t *testing.T) {
		out := t.TempDir()
		_, err := Import(t.Context(), out, []string{filepath.Join(in, "garbage")}, &ImportOptions{Strict: true})
		if !errors.Is(err, errUnknownFormat) {
			t.Fatalf("error %v, want errUnknownFormat", err)
		}
		entries, _ := os.ReadDir(out)
		if len(entries) != 0 {
			t.Errorf("strict import of a bad input wrote %d entries", len(entries))
		}
	})
	t.Run("BPF object", func(t *testing.T) {
		// A BPF object carries .BTF too, of its program: with the key
		// given by flags it must still not become a kernel.
		obj := "../../testdata/objects/features/control-el.o"
		out := t.TempDir()
		_, err := Import(t.Context(), out, []string{obj}, &ImportOptions{Strict: true, Key: kernelkey.Key{Arch: "x86_64", Release: "6.99.2"}})
		if !errors.Is(err, errUnknownFormat) || !strings.Contains(err.Error(), "BPF object") {
			t.Fatalf("error %v, want errUnknownFormat naming a BPF object", err)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("importing a BPF object wrote %d entries", len(entries))
		}
	})
	t.Run("no release", func(t *testing.T) {
		_, err := Import(t.Context(), t.TempDir(), []string{filepath.Join(in, "6.99.1-raw.btf")}, &ImportOptions{Strict: true})
		if !errors.Is(err, errIncompleteKey) || !strings.Contains(err.Error(), "-arch") {
			t.Fatalf("error %v, want errIncompleteKey telling the flags", err)
		}
	})
}

// TestImportRunningKernel imports /sys/kernel/btf/vmlinux under the running
// kernel's release.
func TestImportRunningKernel(t *testing.T) {
	want, err := os.ReadFile(sysVMLinux)
	if err != nil {
		t.Skipf("running kernel exposes no BTF: %v", err)
	}
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Skip(err)
	}
	out := t.TempDir()
	res, err := Import(t.Context(), out, []string{sysVMLinux}, &ImportOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kernels) != 1 || res.Kernels[0].Key.Release != strings.TrimSpace(string(release)) {
		t.Fatalf("imported %v, want release %s", res.Kernels, release)
	}
	for _, k := range readBack(t, out) {
		if !bytes.Equal(k.VMLinux, want) {
			t.Error("imported BTF differs from /sys/kernel/btf/vmlinux")
		}
	}
}

func TestWriteKernel(t *testing.T) {
	// Small synthetic BTF keeps xz encoding quick; TestImportDeb writes
	// real kernels and modules.
	k := &Kernel{
		Key:     kernelkey.Key{Arch: "arm64", Release: "6.99.0-7-test", Distro: "debian", Version: "12"},
		VMLinux: extracttest.SmallBTF(t),
		Modules: []Module{{Name: "a", BTF: extracttest.SplitBTF(t)}, {Name: "nf_conntrack", BTF: extracttest.SplitBTF(t)}},
	}
	out := t.TempDir()
	if _, err := writeKernel(out, k); err != nil {
		t.Fatal(err)
	}
	back := readBack(t, out)[k.Key]
	if back == nil || !bytes.Equal(back.VMLinux, k.VMLinux) || len(back.Modules) != len(k.Modules) {
		t.Fatalf("read back %+v", back)
	}
	for i, m := range back.Modules {
		if m.Name != k.Modules[i].Name || !bytes.Equal(m.BTF, k.Modules[i].BTF) {
			t.Errorf("module %s differs after write and read", m.Name)
		}
	}

	// A second write with fewer modules replaces the modules directory whole.
	fewer := *k
	fewer.Modules = k.Modules[:1]
	if _, err := writeKernel(out, &fewer); err != nil {
		t.Fatal(err)
	}
	if back := readBack(t, out)[k.Key]; len(back.Modules) != 1 {
		t.Errorf("%d modules after rewrite, want 1", len(back.Modules))
	}
	checkNoTemp(t, out)

	// Output depends on the kernel alone.
	again := t.TempDir()
	if _, err := writeKernel(again, k); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{KernelPath("", k.Key), filepath.Join(ModulesPath("", k.Key), "a.btf.zst")} {
		a, errA := os.ReadFile(filepath.Join(out, p))
		b, errB := os.ReadFile(filepath.Join(again, p))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes (%v, %v)", p, errA, errB)
		}
	}

	if _, err := writeKernel(out, &Kernel{Key: kernelkey.Key{Release: "x"}}); !errors.Is(err, errIncompleteKey) {
		t.Errorf("write without arch: %v", err)
	}
}

func TestImportDebSynthetic(t *testing.T) {
	deb := filepath.Join(t.TempDir(), "linux-image.deb")
	writeFile(t, deb, extracttest.MakeDeb(t))
	out := t.TempDir()
	res, err := Import(t.Context(), out, []string{deb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := kernelkey.Key{Arch: "arm64", Release: "6.99.0-7-test", Distro: "debian", Version: "12"}
	if len(res.Kernels) != 1 || res.Kernels[0].Key != want || res.Kernels[0].Modules != 1 {
		t.Fatalf("imported %+v, want %v with one module", res.Kernels, want)
	}
	if len(res.Skipped) != 1 || !errors.Is(res.Skipped[0], errNoBase) || !strings.Contains(res.Skipped[0].Error(), deb+":lib/modules/6.99.0-7-other") {
		t.Errorf("skipped %v, want the modules of 6.99.0-7-other without base", res.Skipped)
	}
	k := readBack(t, out)[want]
	if k == nil || !bytes.Equal(k.VMLinux, extracttest.SmallBTF(t)) || len(k.Modules) != 1 ||
		k.Modules[0].Name != "nf_conntrack" || !bytes.Equal(k.Modules[0].BTF, extracttest.SplitBTF(t)) {
		t.Fatalf("read back %+v", k)
	}
}

// TestImportKeyFrom imports real kernels from where a user keeps them and
// checks the key each gets and what import says told its distribution:
// the directories only in the BTFHub layout (a Debian 12 image under
// nobtf/x86_64/ was keyed distro "corpus", version "nobtf"), Debian 11's
// banner for its release (once debian/unknown), the layout for a BTFHub
// archive, and nothing for an archive outside the layout.
func TestImportKeyFrom(t *testing.T) {
	shared := kerneltest.SharedCorpus(t)
	image := func(release string) string { return filepath.Join(shared, "images", "vmlinuz-"+release) }
	deb11 := kernelkey.Key{Arch: "x86_64", Release: "5.10.0-32-amd64", Distro: "debian", Version: "11"}
	archive11 := filepath.Join(shared, "btfhub", "debian", "11", "x86_64", deb11.Release+".btf.tar.xz")
	undistro := func(k kernelkey.Key) kernelkey.Key { k.Distro, k.Version = "", ""; return k }
	for _, tt := range []struct {
		name, src, at string // at: where the input is put, under a temporary directory
		want          kernelkey.Key
		from          string
	}{
		{"image under nobtf/x86_64", image("6.1.0-47-amd64"), "corpus/nobtf/x86_64/vmlinuz-6.1.0-47-amd64", testKernels[1].key, "the kernel banner (+deb12)"},
		{"Debian 11 image", image(deb11.Release), "images/vmlinuz-" + deb11.Release, deb11, "the kernel banner (Debian 5.10.223-1: Debian 11 ships 5.10)"},
		{"archive in the layout", archive11, "btfhub/debian/11/x86_64/" + deb11.Release + ".btf.tar.xz", deb11, fromPath},
		{"archive under nobtf/x86_64", archive11, "corpus/nobtf/x86_64/" + deb11.Release + ".btf.tar.xz", undistro(deb11), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), filepath.FromSlash(tt.at))
			copyFile(t, tt.src, in)
			res, err := Import(t.Context(), t.TempDir(), []string{in}, &ImportOptions{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Kernels) != 1 || res.Kernels[0].Key != tt.want || res.Kernels[0].KeyFrom != tt.from {
				t.Fatalf("imported %+v, want %v from %q", res.Kernels, tt.want, tt.from)
			}
		})
	}
}

// TestImportDebWithoutBTF imports a kernel package whose image is the
// shared corpus's kernel built without BTF, with modules without BTF as
// such a build has: one error says so and names the debug package to
// import instead, and the modules are not reported as having no kernel
// image, which the package has.
func TestImportDebWithoutBTF(t *testing.T) {
	image, err := os.ReadFile(filepath.Join(kerneltest.SharedCorpus(t), "nobtf", "x86_64", "vmlinuz-6.1.176"))
	if err != nil {
		t.Fatal(err)
	}
	const release = "6.1.176"
	control := "Package: linux-image-" + release + "\nVersion: 6.1.176-1\nArchitecture: amd64\nDescription: the shared corpus's kernel without BTF\n"
	data := []extracttest.Section{{Name: "./boot/vmlinuz-" + release, Data: image}}
	for _, m := range []string{"fs/ext4/ext4.ko", "net/bridge/bridge.ko", "drivers/nvme/host/nvme.ko"} {
		data = append(data, extracttest.Section{Name: "./lib/modules/" + release + "/kernel/" + m, Data: extracttest.MakeELF(elf.EM_X86_64)})
	}
	deb := filepath.Join(t.TempDir(), "linux-image-"+release+"_6.1.176-1_amd64.deb")
	writeFile(t, deb, extracttest.ArFile(
		extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")},
		extracttest.Section{Name: "control.tar.gz", Data: extracttest.TarGz(t, extracttest.Section{Name: "./control", Data: []byte(control)})},
		extracttest.Section{Name: "data.tar.gz", Data: extracttest.TarGz(t, data...)},
	))
	res, err := Import(t.Context(), t.TempDir(), []string{deb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kernels) != 0 || len(res.Skipped) != 1 {
		t.Fatalf("imported %+v, skipped %v; want one error", res.Kernels, res.Skipped)
	}
	err = res.Skipped[0]
	var ke *KernelError
	if !errors.As(err, &ke) || ke.Path != deb+":boot/vmlinuz-"+release || !errors.Is(err, errNoBTF) || errors.Is(err, errNoBase) {
		t.Errorf("skipped %v, want errNoBTF naming the image", err)
	}
	for _, w := range []string{"linux-image-" + release + "-dbg", "its 3 modules"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

package corpus

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/pathelem"
)

// kernelBuildRPMs builds the kernel-core and kernel-modules packages of
// the shared corpus's 6.12.118+deb12-amd64: its real bzImage installed as
// lib/modules/<release>/vmlinuz, its real .ko.xz modules beside it, as
// Fedora and RHEL 8 on ship them.
func kernelBuildRPMs(tb testing.TB, vendor, payload string) (core, modules string) {
	tb.Helper()
	shared := kerneltest.SharedCorpus(tb)
	k := testKernels[3].key
	image, err := os.ReadFile(filepath.Join(shared, "images", "vmlinuz-"+k.Release))
	if err != nil {
		tb.Fatal(err)
	}
	var mods []extracttest.Section
	dir := filepath.Join(shared, "modules", k.Arch, k.Release)
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		mods = append(mods, extracttest.Section{Name: "/lib/modules/" + k.Release + "/kernel/" + e.Name(), Data: data})
	}
	pkgs := extracttest.MakeRPMs(tb, extracttest.RPMBuild{Source: "kernel", Version: "6.12.118", Release: "1.el9", Vendor: vendor,
		Arch: "x86_64", Payload: payload, Packages: map[string][]extracttest.Section{
			"kernel-core":    {{Name: "/lib/modules/" + k.Release + "/vmlinuz", Data: image}},
			"kernel-modules": mods,
		}})
	return pkgs["kernel-core"], pkgs["kernel-modules"]
}

// TestImportRPM imports the kernel-core and kernel-modules RPMs of one
// build, given as two inputs: one kernel, whose BTF is the BTF of its
// vmlinuz imported directly, with every module's split BTF equal to the
// .BTF of its .ko, keyed by the package (rhel 9 from the el9 tag and Red
// Hat's vendor tag) unless the flags say otherwise. The payloads are
// gzip and zstd, as RHEL 7 and RHEL 9 write them.
func TestImportRPM(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: packs and imports a 12 MB kernel twice (TestImportRPMHostile imports a small one)")
	}
	k := testKernels[3].key
	image := filepath.Join(kerneltest.SharedCorpus(t), "images", "vmlinuz-"+k.Release)
	direct := t.TempDir()
	if _, err := Import(t.Context(), direct, []string{image}, nil); err != nil {
		t.Fatal(err)
	}
	want := readBack(t, direct)[k]
	if want == nil {
		t.Fatalf("vmlinuz-%s not imported", k.Release)
	}
	for _, tc := range []struct {
		payload string
		over    kernelkey.Key
		want    kernelkey.Key
	}{
		{"w9.gzdio", kernelkey.Key{}, kernelkey.Key{Arch: "x86_64", Release: k.Release, Distro: "rhel", Version: "9"}},
		{"w3.zstdio", kernelkey.Key{Distro: "centos", Version: "9.4"}, kernelkey.Key{Arch: "x86_64", Release: k.Release, Distro: "centos", Version: "9.4"}},
	} {
		t.Run(tc.payload, func(t *testing.T) {
			core, modules := kernelBuildRPMs(t, "Red Hat, Inc.", tc.payload)
			out := t.TempDir()
			res, err := Import(t.Context(), out, []string{modules, core}, &ImportOptions{Key: tc.over})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != tc.want || res.Kernels[0].Input != core {
				t.Fatalf("imported %+v, skipped %v; want %v from %s", res.Kernels, res.Skipped, tc.want, core)
			}
			got := readBack(t, out)[tc.want]
			if !bytes.Equal(got.VMLinux, want.VMLinux) {
				t.Error("BTF from kernel-core differs from the BTF of its vmlinuz imported directly")
			}
			if len(got.Modules) != 8 {
				t.Fatalf("%d modules, want the 8 of kernel-modules", len(got.Modules))
			}
			for _, m := range got.Modules {
				ko := readTestModule(t, filepath.Join(kerneltest.SharedCorpus(t), "modules", k.Arch, k.Release, m.Name+".ko.xz"))
				if !bytes.Equal(m.BTF, objcopySection(t, ko, ".BTF")) {
					t.Errorf("module %s: BTF differs from its .ko's .BTF section", m.Name)
				}
			}
			checkNoTemp(t, out)
		})
	}
}

// TestImportRPMWithoutKernel imports a kernel-modules RPM alone: its
// modules have no base, and the error names the package and says so.
func TestImportRPMWithoutKernel(t *testing.T) {
	release := testKernels[3].key.Release
	mod, err := os.ReadFile(filepath.Join(kerneltest.SharedCorpus(t), "modules", "x86_64", release, "nvme.ko.xz"))
	if err != nil {
		t.Fatal(err)
	}
	modules := extracttest.MakeRPMs(t, extracttest.RPMBuild{Source: "kernel", Version: "6.12.118", Release: "1.el9", Arch: "x86_64", Payload: "w9.gzdio",
		Packages: map[string][]extracttest.Section{"kernel-modules": {{Name: "/lib/modules/" + release + "/kernel/nvme.ko.xz", Data: mod}}}})["kernel-modules"]
	res, err := Import(t.Context(), t.TempDir(), []string{modules}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kernels) != 0 || len(res.Skipped) != 1 || !errors.Is(res.Skipped[0], errNoBase) ||
		!strings.Contains(res.Skipped[0].Error(), modules+":lib/modules/"+testKernels[3].key.Release) {
		t.Fatalf("imported %v, skipped %v; want one errNoBase naming %s", res.Kernels, res.Skipped, modules)
	}
}

// TestImportRPMHostile imports malformed and hostile RPMs: each is
// skipped with an error naming the package (and the member) and saying
// what is wrong, the good kernels around them still come through, and
// nothing is written outside the corpus.
func TestImportRPMHostile(t *testing.T) {
	const release = "6.99.0-7-test"
	image := arm64Image(t, release)
	module := extracttest.MakeELF(elf.EM_AARCH64, extracttest.Section{Name: ".BTF", Data: extracttest.SplitBTF(t)})
	good := smallKernelRPM(t)
	header, payload := extracttest.RPMLayout(good)
	goodImage := extracttest.Section{Name: "./lib/modules/" + release + "/vmlinuz", Data: image}
	for _, tc := range []struct {
		name    string
		data    []byte
		is      error
		want    string // in the skipped error, after the package's path
		kernels int
	}{
		{"good", good, nil, "", 1},
		{"truncated header", good[:header+64], nil, ": rpm header: ", 0},
		{"truncated signature", good[:120], nil, ": rpm signature header: unexpected EOF", 0},
		{"header claims 2 GiB", patched(good, header+12, 0x7fffffff), extract.ErrTooLarge, ": rpm header: 2147483647 bytes of data", 0},
		{"truncated payload", good[:payload+(len(good)-payload)/2], nil, ": rpm payload: ", 0},
		{"release from a member name", extracttest.RPMWithPayload(t, good, goodImage, extracttest.Section{Name: "./lib/modules/x\n../vmlinuz", Data: image}),
			pathelem.ErrUnsafe, ":lib/modules/x\n../vmlinuz: kernel release", 1},
		{"module name", extracttest.RPMWithPayload(t, good, goodImage, extracttest.Section{Name: "./lib/modules/" + release + "/kernel/a\nb.ko", Data: module}),
			pathelem.ErrUnsafe, ":lib/modules/" + release + "/kernel/a\nb.ko: module name", 1},
		{"release walking out", extracttest.RPMWithPayload(t, good, extracttest.Section{Name: "./lib/modules/../../../tmp/ESCAPED/vmlinuz", Data: image}),
			errNoBTF, ": no BTF found: package kernel-core has no kernel image", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			in := filepath.Join(t.TempDir(), "kernel-core.rpm")
			writeFile(t, in, tc.data)
			res, err := Import(t.Context(), filepath.Join(parent, "out"), []string{in}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Kernels) != tc.kernels {
				t.Errorf("imported %+v, want %d kernels", res.Kernels, tc.kernels)
			}
			if tc.want == "" {
				if len(res.Skipped) != 0 || res.Kernels[0].Key != (kernelkey.Key{Arch: "arm64", Release: release, Distro: "centos", Version: "9"}) {
					t.Errorf("imported %+v, skipped %v", res.Kernels, res.Skipped)
				}
				return
			}
			if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Error(), in+tc.want) || (tc.is != nil && !errors.Is(res.Skipped[0], tc.is)) {
				t.Errorf("skipped %q, want one error saying %q (wrapping %v)", res.Skipped, in+tc.want, tc.is)
			}
			if entries, _ := os.ReadDir(parent); len(entries) > 1 {
				t.Errorf("written beside the corpus: %v", entries)
			}
			if _, err := os.Stat("/tmp/ESCAPED"); err == nil {
				t.Error("/tmp/ESCAPED written")
			}
		})
	}
}

// patched returns b with the big-endian 32-bit word at off set to v.
func patched(b []byte, off int, v uint32) []byte {
	b = bytes.Clone(b)
	binary.BigEndian.PutUint32(b[off:], v)
	return b
}

// smallKernelRPM is a kernel-core package (aarch64, release 7.el9, gzip
// payload) holding a small arm64 Image of release 6.99.0-7-test as
// lib/modules/6.99.0-7-test/vmlinuz: the headers hostile packages reuse.
func smallKernelRPM(tb testing.TB) []byte {
	tb.Helper()
	const release = "6.99.0-7-test"
	pkgs := extracttest.MakeRPMs(tb, extracttest.RPMBuild{Source: "kernel", Version: "6.99.0", Release: "7.el9", Arch: "aarch64", Payload: "w9.gzdio",
		Packages: map[string][]extracttest.Section{"kernel-core": {{Name: "/lib/modules/" + release + "/vmlinuz", Data: arm64Image(tb, release)}}}})
	b, err := os.ReadFile(pkgs["kernel-core"])
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestImportDebuginfoRPM imports kernel-debuginfo RPMs through pahole: a
// small one whose vmlinux and module are objects compiled with cc -g
// (the module, <name>.ko.debug as RPMs name it, becomes split BTF over
// the vmlinux's), and, without -short, one around the shared corpus's
// real DWARF vmlinux (../shared/corpus/nobtf), whose named types must be
// those of that vmlinux imported directly.
func TestImportDebuginfoRPM(t *testing.T) {
	needPahole(t)
	t.Run("compiled", func(t *testing.T) {
		const release = "6.99.0-9.el8.x86_64"
		vmlinux, mod := compileDWARF(t, "vmlinux"), compileDWARF(t, "testmod")
		pkgs := extracttest.MakeRPMs(t, extracttest.RPMBuild{Source: "kernel", Version: "6.99.0", Release: "9.el8", Arch: "x86_64", Payload: "w6.xzdio",
			Packages: map[string][]extracttest.Section{"kernel-debuginfo": {
				{Name: "/usr/lib/debug/lib/modules/" + release + "/vmlinux", Data: vmlinux},
				{Name: "/usr/lib/debug/lib/modules/" + release + "/kernel/drivers/btfembed_testmod.ko.debug", Data: mod},
			}}})
		res, err := Import(t.Context(), t.TempDir(), []string{pkgs["kernel-debuginfo"]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := kernelkey.Key{Arch: "x86_64", Release: release, Distro: "centos", Version: "8"}
		if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != want || res.Kernels[0].Modules != 1 {
			t.Fatalf("imported %+v, skipped %v; want %v with one module", res.Kernels, res.Skipped, want)
		}
	})
	t.Run("nobtf", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: packs and reads a 107 MB vmlinux")
		}
		xzFile := filepath.Join(kerneltest.SharedCorpus(t), "nobtf", "x86_64", "vmlinux-6.1.176.xz")
		direct := t.TempDir()
		res, err := Import(t.Context(), direct, []string{xzFile}, nil)
		if err != nil || len(res.Kernels) != 1 {
			t.Fatalf("importing %s: %v, %+v", xzFile, err, res)
		}
		want := readBack(t, direct)[res.Kernels[0].Key]
		xzData, err := os.ReadFile(xzFile)
		if err != nil {
			t.Fatal(err)
		}
		pkgs := extracttest.MakeRPMs(t, extracttest.RPMBuild{Source: "kernel", Version: "6.1.176", Release: "1.fc40", Arch: "x86_64", Payload: "w1.gzdio",
			Packages: map[string][]extracttest.Section{"kernel-debuginfo": {{Name: "/usr/lib/debug/lib/modules/6.1.176/vmlinux", Data: unxz(t, xzData)}}}})
		out := t.TempDir()
		res, err = Import(t.Context(), out, []string{pkgs["kernel-debuginfo"]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		key := kernelkey.Key{Arch: "x86_64", Release: "6.1.176", Distro: "fedora", Version: "40"}
		if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != key {
			t.Fatalf("imported %+v, skipped %v; want %v", res.Kernels, res.Skipped, key)
		}
		got := readBack(t, out)[key]
		gotNames, wantNames := namedTypes(t, got.VMLinux), namedTypes(t, want.VMLinux)
		if len(gotNames) < 10000 || !maps.Equal(gotNames, wantNames) {
			t.Errorf("%d named types from the RPM, %d from the vmlinux imported directly: they differ", len(gotNames), len(wantNames))
		}
	})
}

// namedTypes counts the named types of raw BTF by kind and name ("*btf.Enum
// format_type"): a name can be both a function's and a type's. A function
// counts once however often it appears: how many copies of a function
// pahole -j keeps (syscall wrappers) changes from run to run.
func namedTypes(tb testing.TB, raw []byte) map[string]int {
	tb.Helper()
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	m := map[string]int{}
	for typ := range spec.All() {
		if n := typ.TypeName(); n != "" {
			k := fmt.Sprintf("%T %s", typ, n)
			if _, isFunc := typ.(*btf.Func); isFunc {
				m[k] = 1
			} else {
				m[k]++
			}
		}
	}
	return m
}

// TestImportFIFO gives a FIFO as an input: it is refused, not waited on
// (neither by the look for RPM headers nor by the import).
func TestImportFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kernel.rpm")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	res, err := Import(t.Context(), t.TempDir(), []string{fifo}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Error(), fifo+": not a regular file") {
		t.Fatalf("skipped %v, want the FIFO refused", res.Skipped)
	}
}

package corpus

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// nobtfKey is the key of the shared corpus's kernel built without BTF
// (../shared/corpus/nobtf): its banner's gcc version says Debian 12.
var nobtfKey = kernelkey.Key{Arch: "x86_64", Release: "6.1.176", Distro: "debian", Version: "12"}

// nobtfVMLinuxXZ returns the shared corpus's DWARF vmlinux (xz), or skips.
func nobtfVMLinuxXZ(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("pahole on a 107 MB vmlinux: not under -short")
	}
	needPahole(t)
	return filepath.Join(kerneltest.SharedCorpus(t), "nobtf", "x86_64", "vmlinux-6.1.176.xz")
}

// unxzFile decompresses an xz file with the xz tool into dir.
func unxzFile(t *testing.T, src, dst string) {
	t.Helper()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("xz", "-dc", src)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("xz -dc %s: %v: %s", src, err, stderr.Bytes())
	}
}

// namedLayouts describes every named STRUCT, UNION, ENUM and TYPEDEF of
// raw BTF as "kind name size: members", counting repeats: what two BTF
// encodings of one kernel must agree on.
func namedLayouts(t *testing.T, raw []byte) map[string]int {
	t.Helper()
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for typ := range spec.All() {
		var s string
		switch v := typ.(type) {
		case *btf.Struct:
			s = fmt.Sprintf("struct %s %d:%s", v.Name, v.Size, members(v.Members))
		case *btf.Union:
			s = fmt.Sprintf("union %s %d:%s", v.Name, v.Size, members(v.Members))
		case *btf.Enum:
			s = fmt.Sprintf("enum %s %d: %d values", v.Name, v.Size, len(v.Values))
		case *btf.Typedef:
			s = fmt.Sprintf("typedef %s: %T %s", v.Name, v.Type, v.Type.TypeName())
		default:
			continue
		}
		if typ.TypeName() != "" {
			m[s]++
		}
	}
	return m
}

func members(ms []btf.Member) string {
	var b bytes.Buffer
	for _, m := range ms {
		fmt.Fprintf(&b, " %s@%d", m.Name, m.Offset)
	}
	return b.String()
}

// diffLayouts lists up to ten descriptions in one map and not the other.
func diffLayouts(a, b map[string]int) []string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if a[k] != b[k] && len(d) < 10 {
			d = append(d, fmt.Sprintf("%dx vs %dx %s", a[k], b[k], k))
		}
	}
	return d
}

// runPahole runs the installed pahole directly, with the flags the
// kernel's build passes for 6.1 (Debian's: -j --btf_gen_floats
// --lang_exclude=rust), as the reference an import must match.
func runPahole(t *testing.T, vmlinux string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ref.btf")
	args := []string{"-F", "dwarf", "-j", "--btf_gen_floats", "--lang_exclude=rust", "--btf_encode_detached=" + out, vmlinux}
	if b, err := exec.Command("pahole", args...).CombinedOutput(); err != nil {
		t.Fatalf("pahole: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// typeCount is the number of types of raw standalone BTF.
func typeCount(t *testing.T, raw []byte) int {
	t.Helper()
	s, err := extract.ParseBTF(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return int(s.NextID()) - 1
}

// TestImportDWARFVMLinux imports the shared corpus's kernel built without
// BTF from its compressed DWARF vmlinux, where it is: the BTF has the
// 57-60k types pahole makes for it, its named types are those of a direct
// pahole run, a second import is served by the cache, and the key comes
// from the banner, not from nobtf/x86_64/ taken for <version>/<arch>.
func TestImportDWARFVMLinux(t *testing.T) {
	in := nobtfVMLinuxXZ(t)
	log := countingPahole(t)
	opts := &ImportOptions{CacheDir: t.TempDir()}
	var first []byte
	for run := range 2 {
		out := t.TempDir()
		res, err := Import(t.Context(), out, []string{in}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != nobtfKey || res.Kernels[0].KeyFrom != "the kernel banner (+deb12)" {
			t.Fatalf("run %d: imported %+v, skipped %v; want %v from its banner", run, res.Kernels, res.Skipped, nobtfKey)
		}
		k := readBack(t, out)[nobtfKey]
		if run == 0 {
			first = k.VMLinux
			continue
		}
		if !bytes.Equal(k.VMLinux, first) {
			t.Error("the cached import gave other BTF than the first")
		}
	}
	if n := encodeRuns(t, log); n != 1 {
		t.Errorf("pahole made BTF %d times over two imports, want once", n)
	}
	if n := typeCount(t, first); n < 57000 || n > 60000 {
		t.Errorf("%d types, want 57-60k (../shared/corpus/README.md)", n)
	}
	vmlinux := filepath.Join(t.TempDir(), "vmlinux")
	unxzFile(t, in, vmlinux)
	got, want := namedLayouts(t, first), namedLayouts(t, runPahole(t, vmlinux))
	if d := append(diffLayouts(got, want), diffLayouts(want, got)...); len(d) > 0 {
		t.Errorf("named types differ from a direct pahole run:\n%s", d)
	}
	t.Logf("%d types, %d named struct/union/enum/typedef layouts", typeCount(t, first), len(got))
}

// TestImportDebugDebReal wraps the shared corpus's DWARF vmlinux into a
// -dbg package with dpkg-deb, at the path Debian's packages use, and
// imports it.
func TestImportDebugDebReal(t *testing.T) {
	xzFile := nobtfVMLinuxXZ(t)
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb not installed")
	}
	root := t.TempDir()
	boot := filepath.Join(root, "usr", "lib", "debug", "boot")
	if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(boot, 0o755); err != nil {
		t.Fatal(err)
	}
	unxzFile(t, xzFile, filepath.Join(boot, "vmlinux-6.1.176"))
	control := "Package: linux-image-6.1.176-dbg\nVersion: 6.1.176-1\nArchitecture: amd64\nMaintainer: btfembed tests <test@example.org>\nDescription: debug symbols of the shared corpus's kernel without BTF\n"
	writeFile(t, filepath.Join(root, "DEBIAN", "control"), []byte(control))
	deb := filepath.Join(t.TempDir(), "linux-image-6.1.176-dbg_6.1.176-1_amd64.deb")
	if b, err := exec.Command("dpkg-deb", "--root-owner-group", "-Znone", "--build", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v: %s", err, b)
	}
	out := t.TempDir()
	res, err := Import(t.Context(), out, []string{deb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != nobtfKey {
		t.Fatalf("imported %+v, skipped %v; want %v", res.Kernels, res.Skipped, nobtfKey)
	}
	k := readBack(t, out)[nobtfKey]
	if n := typeCount(t, k.VMLinux); n < 57000 || n > 60000 {
		t.Errorf("%d types, want 57-60k", n)
	}
}

// signedEnums counts the enums of raw BTF, and those marked signed (the
// kind_flag of BTF_KIND_ENUM, which kernels before 6.0 refuse).
func signedEnums(t *testing.T, raw []byte) (signed, enums int) {
	t.Helper()
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for typ := range spec.All() {
		if e, ok := typ.(*btf.Enum); ok {
			enums++
			if e.Signed {
				signed++
			}
		}
	}
	return signed, enums
}

// TestImportDWARFEnumSign: signed enums are what the kernel's own build
// makes of its DWARF. Kernels before 6.0 refuse an ENUM with kind_flag
// set ("Invalid btf_info kind_flag": btf_enum_check_meta until the enum64
// series; a 5.15 kernel built with pahole 1.24 and without
// --skip_encoding_btf_enum64 could not load its own modules), so their
// build has pahole leave the sign out, and Debian 11's BTF has no signed
// enum: its -1 values read 4294967295, and the BTF made for such a kernel
// must say the same. From 6.0 the sign is kept, as pahole makes it.
func TestImportDWARFEnumSign(t *testing.T) {
	in := nobtfVMLinuxXZ(t)
	deb11 := kerneltest.SharedArchive(t, "debian/11/x86_64/5.10.0-32-amd64")
	if signed, enums := signedEnums(t, deb11.BTF); signed != 0 || enums != 1547 {
		t.Fatalf("Debian 11's own BTF: %d of %d enums signed, want 0 of 1547", signed, enums)
	}
	vmlinux := filepath.Join(t.TempDir(), "vmlinux")
	unxzFile(t, in, vmlinux)
	direct, _ := signedEnums(t, runPahole(t, vmlinux))
	if direct == 0 {
		t.Fatal("a direct pahole run made no signed enum: nothing to tell apart")
	}
	for _, tt := range []struct {
		release string
		signed  int
	}{
		{nobtfKey.Release, direct},
		{"5.10.0-32-amd64", 0}, // the same DWARF, as a kernel before 6.0
	} {
		res, err := Import(t.Context(), t.TempDir(), []string{in}, &ImportOptions{Strict: true, Key: kernelkey.Key{Release: tt.release}})
		if err != nil {
			t.Fatal(err)
		}
		k, err := ReadBTF(res.Kernels[0].File)
		if err != nil {
			t.Fatal(err)
		}
		if signed, enums := signedEnums(t, k.BTF); signed != tt.signed {
			t.Errorf("%s: %d of %d enums signed, want %d", tt.release, signed, enums, tt.signed)
		}
	}
}

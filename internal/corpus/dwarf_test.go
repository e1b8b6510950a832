package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/pahole"
)

// needPahole skips without a usable pahole.
func needPahole(tb testing.TB) {
	tb.Helper()
	if _, err := pahole.Find(context.Background()); err != nil {
		tb.Skipf("no usable pahole: %v", err)
	}
}

// countingPahole puts a pahole on $PAHOLE that logs each run's arguments
// to the returned file and runs the real one, so a test can tell whether
// an import ran it.
func countingPahole(t *testing.T) (log string) {
	t.Helper()
	real, err := exec.LookPath("pahole")
	if err != nil {
		t.Skip("pahole not installed")
	}
	dir := t.TempDir()
	log = filepath.Join(dir, "runs")
	script := filepath.Join(dir, "pahole")
	body := fmt.Sprintf("#!/bin/sh\necho \"$@\" >> %q\nexec %q \"$@\"\n", log, real)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(pahole.EnvVar, script)
	return log
}

// encodeRuns counts the runs in a countingPahole log that made BTF.
func encodeRuns(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "--btf_encode_detached")
}

// compileDWARF builds testdata/dwarf/<name>.c with cc -g.
func compileDWARF(t *testing.T, name string) []byte {
	t.Helper()
	return compileC(t, filepath.Join("testdata", "dwarf", name+".c"))
}

// compileDWARFBanner builds testdata/dwarf/vmlinux.c with cc -g, its
// banner replaced by another kernel's (the text after "Linux version ").
func compileDWARFBanner(t *testing.T, banner string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "dwarf", "vmlinux.c"))
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(src, []byte(`"Linux version `))
	end := bytes.Index(src, []byte(`\n";`))
	if start < 0 || end < start {
		t.Fatal("testdata/dwarf/vmlinux.c: no banner")
	}
	c := filepath.Join(t.TempDir(), "vmlinux.c")
	writeFile(t, c, slices.Concat(src[:start], []byte(strconv.Quote("Linux version "+banner+"\n")), src[end+len(`\n"`):]))
	return compileC(t, c)
}

// compileC compiles a C file with cc -g.
func compileC(t *testing.T, file string) []byte {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no cc to compile the DWARF test objects")
	}
	out := filepath.Join(t.TempDir(), filepath.Base(file)+".o")
	if b, err := exec.Command("cc", "-g", "-O2", "-c", file, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// typeNames returns the named types of raw BTF by kind.
func typeNames(t *testing.T, raw, base []byte) map[string]string {
	t.Helper()
	var spec *btf.Spec
	var err error
	if base == nil {
		spec, err = btf.LoadSpecFromReader(bytes.NewReader(raw))
	} else {
		var b *btf.Spec
		if b, err = btf.LoadSpecFromReader(bytes.NewReader(base)); err == nil {
			spec, err = btf.LoadSplitSpecFromReader(bytes.NewReader(raw), b)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for typ := range spec.All() {
		if n := typ.TypeName(); n != "" {
			m[n] = fmt.Sprintf("%T", typ)
		}
	}
	return m
}

// smallDebugDeb writes a -dbg package whose vmlinux and module are
// testdata/dwarf's objects compiled with cc -g, with a module of another
// release beside them.
func smallDebugDeb(t *testing.T) string {
	t.Helper()
	vmlinux, mod := compileDWARF(t, "vmlinux"), compileDWARF(t, "testmod")
	control := "Package: linux-image-6.99.0-9-dbgtest-dbg\nVersion: 6.99.1-1\nArchitecture: amd64\nDescription: test\n"
	deb := filepath.Join(t.TempDir(), "linux-image-6.99.0-9-dbgtest-dbg_6.99.1-1_amd64.deb")
	writeFile(t, deb, extracttest.ArFile(
		extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")},
		extracttest.Section{Name: "control.tar.gz", Data: extracttest.TarGz(t, extracttest.Section{Name: "./control", Data: []byte(control)})},
		extracttest.Section{Name: "data.tar.gz", Data: extracttest.TarGz(t,
			extracttest.Section{Name: "./usr/lib/debug/boot/vmlinux-6.99.0-9-dbgtest", Data: vmlinux},
			extracttest.Section{Name: "./usr/lib/debug/lib/modules/6.99.0-9-dbgtest/kernel/drivers/btfembed_testmod.ko", Data: mod},
			extracttest.Section{Name: "./usr/lib/debug/lib/modules/6.99.0-1-other/kernel/x.ko", Data: mod},
			extracttest.Section{Name: "./usr/share/doc/linux-image-6.99.0-9-dbgtest-dbg/copyright", Data: []byte("GPL-2\n")},
		)},
	))
	return deb
}

// dwarfVMLinuxFiles writes testdata/dwarf's vmlinux compiled with cc -g,
// plain and gzip-compressed, under names that give the release.
func dwarfVMLinuxFiles(t *testing.T) (plain, gz string) {
	t.Helper()
	dir := t.TempDir()
	data := compileDWARF(t, "vmlinux")
	plain, gz = filepath.Join(dir, "vmlinux-6.99.0-9-dbgtest"), filepath.Join(dir, "gz", "vmlinux-6.99.0-9-dbgtest.gz")
	writeFile(t, plain, data)
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	writeFile(t, gz, b.Bytes())
	return plain, gz
}

// TestImportDWARFVMLinuxSmall imports a DWARF vmlinux plain and
// compressed; the compressed one is served by the cache the second time.
func TestImportDWARFVMLinuxSmall(t *testing.T) {
	needPahole(t)
	log := countingPahole(t)
	plain, gz := dwarfVMLinuxFiles(t)
	want := kernelkey.Key{Arch: "x86_64", Release: "6.99.0-9-dbgtest", Distro: "debian", Version: "12"}
	opts := &ImportOptions{CacheDir: t.TempDir()}
	for _, in := range []string{plain, gz, gz} {
		res, err := Import(t.Context(), t.TempDir(), []string{in}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != want {
			t.Fatalf("%s: imported %+v, skipped %v; want %v", in, res.Kernels, res.Skipped, want)
		}
	}
	if n := encodeRuns(t, log); n != 2 {
		t.Errorf("pahole made BTF %d times, want 2 (plain and compressed, then the cache)", n)
	}
}

// TestImportDWARFNoPahole: without pahole a debug package is skipped with
// an error that says what to install, and a vmlinux without .BTF is never
// imported as a kernel without types.
func TestImportDWARFNoPahole(t *testing.T) {
	deb := smallDebugDeb(t)
	vmlinux, gz := dwarfVMLinuxFiles(t)
	t.Setenv(pahole.EnvVar, filepath.Join(t.TempDir(), "no-pahole"))
	res, err := Import(t.Context(), t.TempDir(), []string{deb, vmlinux, gz}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kernels) != 0 || len(res.Skipped) != 3 {
		t.Fatalf("imported %+v, skipped %v; want both skipped", res.Kernels, res.Skipped)
	}
	for _, err := range res.Skipped {
		if !errors.Is(err, pahole.ErrNotFound) || !strings.Contains(err.Error(), "Debian package pahole") {
			t.Errorf("skipped with %v, want pahole.ErrNotFound naming the package", err)
		}
	}
}

// TestImportDebugDebSmall imports a -dbg package whose vmlinux and module
// are small objects compiled with cc -g: pahole runs on real DWARF, the
// module becomes split BTF over the vmlinux's, and a second import is
// served by the cache without running pahole.
func TestImportDebugDebSmall(t *testing.T) {
	needPahole(t)
	log := countingPahole(t)
	deb := smallDebugDeb(t)
	want := kernelkey.Key{Arch: "x86_64", Release: "6.99.0-9-dbgtest", Distro: "debian", Version: "12"}
	cacheDir := t.TempDir()
	var warnings []error
	opts := &ImportOptions{CacheDir: cacheDir, Warn: func(err error) { warnings = append(warnings, err) }}
	var files [2][]byte
	for run := range 2 {
		warnings = nil
		out := t.TempDir()
		res, err := Import(t.Context(), out, []string{deb}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != want || res.Kernels[0].Modules != 1 {
			t.Fatalf("run %d: imported %+v, skipped %v; want %v with one module", run, res.Kernels, res.Skipped, want)
		}
		if run == 0 && (len(warnings) != 1 || !errors.Is(warnings[0], errNoBase) || !strings.Contains(warnings[0].Error(), "6.99.0-1-other")) {
			t.Errorf("warnings %v, want one for the module of 6.99.0-1-other", warnings)
		}
		k := readBack(t, out)[want]
		vm := typeNames(t, k.VMLinux, nil)
		for name, kind := range map[string]string{"task_struct": "*btf.Struct", "list_head": "*btf.Struct", "task_pid": "*btf.Func"} {
			if vm[name] != kind {
				t.Errorf("vmlinux BTF: %s is %q, want %s", name, vm[name], kind)
			}
		}
		if len(k.Modules) != 1 || k.Modules[0].Name != "btfembed_testmod" {
			t.Fatalf("modules %+v", k.Modules)
		}
		mt := typeNames(t, k.Modules[0].BTF, k.VMLinux)
		if mt["btfembed_testmod_state"] != "*btf.Struct" || mt["btfembed_testmod_hit"] != "*btf.Func" {
			t.Errorf("module BTF lacks the module's types: %v", mt)
		}
		// Everything else the module uses (list_head, unsigned long) is
		// the base's: pahole --btf_base deduplicates against it.
		if len(mt) != 2 {
			t.Errorf("module BTF names %v, want only the module's own two types", mt)
		}
		files[run], err = os.ReadFile(res.Kernels[0].File)
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := encodeRuns(t, log); n != 2 {
		t.Errorf("pahole made BTF %d times over two imports, want 2 (vmlinux and module, then the cache)", n)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the cached import wrote other bytes than the first")
	}
}

// debian11Banner is the banner of Debian 11's 5.10.0-32-amd64, as its
// image in the shared corpus carries it: no +deb11 mark.
const debian11Banner = "5.10.0-32-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) #1 SMP Debian 5.10.223-1 (2024-08-10)"

// TestImportDebugDebDebian11 imports a -dbg package laid out as Debian
// 11's linux-image-5.10.0-32-amd64-dbg, its vmlinux carrying that
// kernel's banner: keyed debian 11 from the banner (once debian/unknown:
// nothing in it or in the package version 5.10.223-1 was read as 11),
// with Progress told of its modules from 0 to all.
func TestImportDebugDebDebian11(t *testing.T) {
	needPahole(t)
	const release = "5.10.0-32-amd64"
	control := "Package: linux-image-" + release + "-dbg\nVersion: 5.10.223-1\nArchitecture: amd64\nDescription: test\n"
	mod := compileDWARF(t, "testmod")
	deb := filepath.Join(t.TempDir(), "linux-image-"+release+"-dbg_5.10.223-1_amd64.deb")
	writeFile(t, deb, extracttest.ArFile(
		extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")},
		extracttest.Section{Name: "control.tar.gz", Data: extracttest.TarGz(t, extracttest.Section{Name: "./control", Data: []byte(control)})},
		extracttest.Section{Name: "data.tar.gz", Data: extracttest.TarGz(t,
			extracttest.Section{Name: "./usr/lib/debug/boot/vmlinux-" + release, Data: compileDWARFBanner(t, debian11Banner)},
			extracttest.Section{Name: "./usr/lib/debug/lib/modules/" + release + "/kernel/drivers/a.ko", Data: mod},
			extracttest.Section{Name: "./usr/lib/debug/lib/modules/" + release + "/kernel/drivers/b.ko", Data: mod},
		)},
	))
	var progress []moduleProgress
	opts := &ImportOptions{Progress: func(input string, done, found int, read bool) {
		if input != deb {
			t.Errorf("progress of %s, want %s", input, deb)
		}
		progress = append(progress, moduleProgress{done, found, read})
	}}
	res, err := Import(t.Context(), t.TempDir(), []string{deb}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := kernelkey.Key{Arch: "x86_64", Release: release, Distro: "debian", Version: "11"}
	const from = "the kernel banner (Debian 5.10.223-1: Debian 11 ships 5.10)"
	if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != want || res.Kernels[0].KeyFrom != from {
		t.Fatalf("imported %+v, skipped %v; want %v from %q", res.Kernels, res.Skipped, want, from)
	}
	// From nothing found to both made, counts that only grow; the
	// modules may be made while the package is still read.
	first, last := moduleProgress{}, moduleProgress{done: 2, found: 2, read: true}
	if len(progress) < 2 || progress[0] != first || progress[len(progress)-1] != last {
		t.Fatalf("progress %+v, want from %+v to %+v", progress, first, last)
	}
	for i, p := range progress[1:] {
		if prev := progress[i]; p.done < prev.done || p.found < prev.found || prev.read && !p.read || p.done > p.found {
			t.Errorf("progress %+v after %+v", p, prev)
		}
	}
}

// TestDWARFCacheWarnings: an entry the cache refuses (here a symlink in
// place of the entry a first import wrote) is reported as a warning, and
// the import runs pahole again instead of trusting it.
func TestDWARFCacheWarnings(t *testing.T) {
	needPahole(t)
	deb := smallDebugDeb(t)
	cacheDir, outside := t.TempDir(), t.TempDir()
	var warnings []string
	opts := &ImportOptions{CacheDir: cacheDir, Warn: func(err error) { warnings = append(warnings, err.Error()) }}
	if _, err := Import(t.Context(), t.TempDir(), []string{deb}, opts); err != nil {
		t.Fatal(err)
	}
	linked := 0
	err := filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || filepath.Dir(p) == cacheDir {
			return err
		}
		target := filepath.Join(outside, strconv.Itoa(linked))
		if err := os.Rename(p, target); err != nil {
			return err
		}
		linked++
		return os.Symlink(target, p)
	})
	if err != nil || linked == 0 {
		t.Fatalf("linking the cache's entries: %v (%d linked)", err, linked)
	}
	warnings = nil
	res, err := Import(t.Context(), t.TempDir(), []string{deb}, opts)
	if err != nil || len(res.Kernels) != 1 {
		t.Fatalf("second import: %v, %+v", err, res)
	}
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "cache: "+deb) }) {
		t.Errorf("warnings %q, want one from the cache about %s", warnings, deb)
	}
}

// TestDWARFCacheForged forges the cache entry of a DWARF import, as
// whoever can write a cache restored across a trust boundary can: the
// right key and checksums, holding another kernel's BTF (a real Debian
// kernel's) under a made-up release. The default mode trusts the cache's
// owner and imports it; the verify mode must run pahole again, warn, and
// import what the input's DWARF gives, and store that in place of the
// forgery.
func TestDWARFCacheForged(t *testing.T) {
	needPahole(t)
	log := countingPahole(t)
	plain, _ := dwarfVMLinuxFiles(t)
	want := kernelkey.Key{Arch: "x86_64", Release: "6.99.0-9-dbgtest", Distro: "debian", Version: "12"}
	forged := kernelkey.Key{Arch: "x86_64", Release: "6.99.0-9-forged", Distro: "debian", Version: "12"}
	var warnings []string
	opts := &ImportOptions{CacheDir: t.TempDir(), Warn: func(err error) { warnings = append(warnings, err.Error()) }}
	importOne := func() Imported {
		t.Helper()
		warnings = nil
		res, err := Import(t.Context(), t.TempDir(), []string{plain}, opts)
		if err != nil || len(res.Kernels) != 1 || len(res.Skipped) != 0 {
			t.Fatalf("import: %v, %+v", err, res)
		}
		return res.Kernels[0]
	}
	if k := importOne(); k.Key != want {
		t.Fatalf("first import gave %v, want %v", k.Key, want)
	}
	tool, err := pahole.Find(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	other := hubBTF(t, testKernels[2].key)
	openDWARFCache(plain, tool, opts).put(&Kernel{Key: forged, Path: plain, VMLinux: other}, nil)

	if k := importOne(); k.Key != forged || k.Bytes != len(other) {
		t.Fatalf("default mode imported %v (%d bytes), want the forged entry: the test forged nothing", k.Key, k.Bytes)
	}
	runs := encodeRuns(t, log)

	opts.CacheVerify = true
	k := importOne()
	if k.Key != want || k.Bytes == len(other) {
		t.Errorf("verify mode imported %v (%d bytes), want %v made by pahole", k.Key, k.Bytes, want)
	}
	if encodeRuns(t, log) == runs {
		t.Error("verify mode did not run pahole")
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], plain) || !strings.Contains(warnings[0], forged.Release) {
		t.Errorf("warnings %q, want one naming %s and the forged release", warnings, plain)
	}

	t.Log(warnings[0])

	// The forgery is gone: the verify mode finds pahole's kernel in the
	// entry, and the default mode gets it.
	for _, verify := range []bool{true, false} {
		opts.CacheVerify = verify
		if k := importOne(); k.Key != want || len(warnings) != 0 {
			t.Errorf("after verify mode (verify=%v): imported %v with warnings %q, want %v quietly", verify, k.Key, warnings, want)
		}
	}
}

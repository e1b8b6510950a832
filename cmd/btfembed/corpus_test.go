package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/pahole"
)

const testCorpus = "../../testdata/btfhub"

func TestCorpusList(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runCorpus(&stdout, &stderr, []string{"ls", testCorpus}); err != nil {
		t.Fatal(err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	// Type counts and sizes as ../shared/corpus/README.md gives them
	// (bpftool's count, and the size of the archive's member).
	want := []struct {
		key   string
		types string
	}{
		{"arm64/6.1.0-57-arm64 (debian 12)", "109726"},
		{"x86_64/6.1.0-47-amd64 (debian 12)", "100628"},
		{"x86_64/6.1.0-50-cloud-amd64 (debian 12)", "95068"},
		{"x86_64/6.12.118+deb12-amd64 (debian 12)", "112806"},
	}
	if len(lines) != len(want)+2 {
		t.Fatalf("%d lines, want header, %d kernels and a total:\n%s", len(lines), len(want), stdout.String())
	}
	for i, w := range want {
		rest, ok := strings.CutPrefix(lines[i+1], w.key+" ")
		f := strings.Fields(rest)
		if !ok || len(f) != 4 || f[0] != w.types {
			t.Errorf("line %q, want %s with %s types", lines[i+1], w.key, w.types)
		}
	}
	if total := strings.Fields(lines[len(lines)-1]); len(total) < 4 || total[1] != "4" || total[3] != "418228" {
		t.Errorf("total %q, want 4 kernels and 418228 types", lines[len(lines)-1])
	}
}

func TestCorpusImport(t *testing.T) {
	in := filepath.Join(testCorpus, "debian/12/x86_64/6.1.0-50-cloud-amd64.btf.tar.xz")
	garbage := filepath.Join(t.TempDir(), "garbage")
	os.WriteFile(garbage, []byte("not a kernel"), 0o644)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := runCorpus(&stdout, &stderr, []string{"import", "-o", out, "-distro", "test", in, garbage})
	if err != nil {
		t.Fatal(err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "imported 1 kernel with 0 modules; skipped 1") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), garbage+": unknown file format") {
		t.Errorf("stderr does not name the bad input:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "test/12/x86_64/6.1.0-50-cloud-amd64.btf.tar.xz")); err != nil {
		t.Error(err)
	}

	stdout.Reset()
	stderr.Reset()
	err = runCorpus(&stdout, &stderr, []string{"import", "-strict", "-o", t.TempDir(), garbage})
	if err == nil || !strings.Contains(err.Error(), garbage) {
		t.Errorf("strict import of a bad input: error %v, want one naming it", err)
	}
}

// TestCorpusImportSays imports, with stderr no terminal as in CI, a -dbg
// package of ten modules made of testdata C compiled with cc -g, and
// Debian 11's image put under a nobtf/x86_64/ directory: stderr shows
// the modules pahole makes as they go, and what told each input's
// distribution (the banners, not the directories).
func TestCorpusImportSays(t *testing.T) {
	if _, err := pahole.Find(t.Context()); err != nil {
		t.Skipf("no usable pahole: %v", err)
	}
	image := filepath.Join(t.TempDir(), "corpus", "nobtf", "x86_64", "vmlinuz-5.10.0-32-amd64")
	if err := os.MkdirAll(filepath.Dir(image), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(kerneltest.SharedFile(t, "images", "vmlinuz-5.10.0-32-amd64"), image); err != nil {
		t.Fatal(err)
	}
	const release = "6.99.0-9-dbgtest" // testdata/dwarf/vmlinux.c's banner
	data := []extracttest.Section{{Name: "./usr/lib/debug/boot/vmlinux-" + release, Data: compileC(t, "vmlinux.c")}}
	mod := compileC(t, "testmod.c")
	for i := range 10 {
		data = append(data, extracttest.Section{Name: fmt.Sprintf("./usr/lib/debug/lib/modules/%s/kernel/m%d.ko", release, i), Data: mod})
	}
	control := "Package: linux-image-" + release + "-dbg\nVersion: 6.99.1-1\nArchitecture: amd64\nDescription: test\n"
	deb := filepath.Join(t.TempDir(), "linux-image-"+release+"-dbg_6.99.1-1_amd64.deb")
	err := os.WriteFile(deb, extracttest.ArFile(
		extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")},
		extracttest.Section{Name: "control.tar.gz", Data: extracttest.TarGz(t, extracttest.Section{Name: "./control", Data: []byte(control)})},
		extracttest.Section{Name: "data.tar.gz", Data: extracttest.TarGz(t, data...)},
	), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := runCorpus(&stdout, &stderr, []string{"import", "-o", t.TempDir(), deb, image}); err != nil {
		t.Fatal(err, stderr.String())
	}
	for _, want := range []string{
		deb + ": 0/10 modules, ",
		deb + ": 5/10 modules, ",
		deb + ": 10/10 modules, ",
		deb + ": guessed debian 12 from the kernel banner (+deb12)",
		image + ": guessed debian 11 from the kernel banner (Debian 5.10.223-1: Debian 11 ships 5.10)",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// compileC compiles a C file of internal/corpus/testdata/dwarf with cc -g.
func compileC(t *testing.T, name string) []byte {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no cc to compile the DWARF test objects")
	}
	out := filepath.Join(t.TempDir(), name+".o")
	if b, err := exec.Command("cc", "-g", "-O2", "-c", filepath.Join("..", "..", "internal", "corpus", "testdata", "dwarf", name), "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCorpusUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "missing subcommand"},
		{[]string{"frob"}, `unknown subcommand "frob"`},
		{[]string{"import", "x"}, "-o <dir> is required"},
		{[]string{"import", "-o", "d"}, "no inputs"},
		{[]string{"import", "-o", "d", "-arch", "vax", "x"}, `unknown architecture "vax"`},
		{[]string{"import", "-bogus"}, "flag provided but not defined"},
		{[]string{"import", "-o", "d", "-release", "6." + strings.Repeat("a", 2998), "x"}, "-release \"6.aaa"},
		{[]string{"import", "-o", "d", "-distro", "../x", "x"}, "-distro \"../x\": byte 0x2f at 2"},
		{[]string{"ls"}, "no corpus directory"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := runCorpus(&stdout, &stderr, tt.args)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want a usage error saying %q", tt.args, err, tt.want)
		}
	}
	var stdout bytes.Buffer
	if err := runCorpus(&stdout, &stdout, []string{"import", "-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
	if !strings.Contains(stdout.String(), "-release") || !strings.Contains(stdout.String(), "docs/corpus.md") ||
		!strings.Contains(stdout.String(), "-cache-verify") || !strings.Contains(stdout.String(), "BTFEMBED_CACHE_VERIFY") {
		t.Errorf("help lacks the flags or the layout doc:\n%s", stdout.String())
	}
}

// TestCorpusListEscapes: a corpus file whose name holds control
// characters is reported with them escaped, never printed raw.
func TestCorpusListEscapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "debian", "12", "x86_64")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ev\nil\x1b[2J.btf.tar.xz"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	runCorpus(&stdout, &stderr, []string{"ls", filepath.Dir(filepath.Dir(filepath.Dir(dir)))})
	if out := stdout.String() + stderr.String(); strings.Contains(out, "\x1b") || !strings.Contains(out, `ev\nil\x1b[2J.btf.tar.xz`) {
		t.Errorf("control characters not escaped:\n%q", out)
	}
}

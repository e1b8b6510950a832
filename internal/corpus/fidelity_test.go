package corpus

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// fetchEnv turns on the tests that download from Debian's archive.
const fetchEnv = "BTFEMBED_FETCH"

// fetchDeb downloads a Debian package with apt-get download into
// $BTFEMBED_FETCH_DIR (kept across runs), or a temporary directory, unless
// it is there already. It skips unless $BTFEMBED_FETCH is 1.
func fetchDeb(t *testing.T, pkg string) string {
	t.Helper()
	if os.Getenv(fetchEnv) != "1" {
		t.Skipf("downloads %s from Debian's archive: set %s=1", pkg, fetchEnv)
	}
	if testing.Short() {
		t.Skip("a large download: not under -short")
	}
	dir := os.Getenv("BTFEMBED_FETCH_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	find := func() string {
		m, _ := filepath.Glob(filepath.Join(dir, pkg+"_*.deb"))
		if len(m) == 1 {
			return m[0]
		}
		return ""
	}
	if deb := find(); deb != "" {
		return deb
	}
	cmd := exec.Command("apt-get", "download", pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("apt-get download %s: %v: %s", pkg, err, strings.TrimSpace(string(b)))
	}
	deb := find()
	if deb == "" {
		t.Fatalf("apt-get download %s left no %s_*.deb in %s", pkg, pkg, dir)
	}
	return deb
}

// TestDWARFFidelity imports Debian's -dbg package of a kernel built with
// BTF and checks that pahole's BTF equals the kernel's own .BTF (the
// BTFHub archive of testdata) in every named struct, union, enum and
// typedef: name, size, member names and offsets. Opt-in: BTFEMBED_FETCH=1
// (282 MB download, about a minute of pahole on two cores).
func TestDWARFFidelity(t *testing.T) {
	needPahole(t)
	deb := fetchDeb(t, "linux-image-6.1.0-50-cloud-amd64-dbg")
	key := kernelkey.Key{Arch: "x86_64", Release: "6.1.0-50-cloud-amd64", Distro: "debian", Version: "12"}
	out := t.TempDir()
	start := time.Now()
	res, err := Import(t.Context(), out, []string{deb}, &ImportOptions{NoModules: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("import without modules, cache off: %v", time.Since(start).Round(time.Millisecond))
	if len(res.Skipped) > 0 || len(res.Kernels) != 1 || res.Kernels[0].Key != key {
		t.Fatalf("imported %+v, skipped %v; want %v", res.Kernels, res.Skipped, key)
	}
	got := readBack(t, out)[key].VMLinux
	own := hubBTF(t, key)
	gl, ol := namedLayouts(t, got), namedLayouts(t, own)
	if d := append(diffLayouts(gl, ol), diffLayouts(ol, gl)...); len(d) > 0 {
		t.Errorf("pahole's named types differ from the kernel's own .BTF:\n%s", strings.Join(d, "\n"))
	}
	t.Logf("pahole: %d types; the kernel's .BTF: %d; %d named struct/union/enum/typedef layouts, all equal",
		typeCount(t, got), typeCount(t, own), len(gl))
}

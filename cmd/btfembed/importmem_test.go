package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/cache"
)

// bombDeb builds, with dpkg-deb --build, issue 33's kernel package: n
// modules (lib/modules/<release>/kernel/bombNN.ko) of size bytes of zeros
// each, in a zstd data.tar. 11 modules of 380 MiB, just under the 384 MiB
// cap of a package member, make a package of 139 KB. The modules are
// sparse files, so building it writes no gigabytes; dpkg-deb still reads
// and compresses them (20 s on a busy 2-core machine). It is written into
// dir, where a package built before is used again.
func bombDeb(tb testing.TB, dir string, n int, size int64) string {
	tb.Helper()
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		tb.Skip("dpkg-deb not installed")
	}
	deb := filepath.Join(dir, fmt.Sprintf("linux-image-bombs-%dx%dM-ko-zst.deb", n, size>>20))
	if _, err := os.Stat(deb); err == nil {
		return deb
	}
	root := filepath.Join(tb.TempDir(), "root")
	mods := filepath.Join(root, "lib", "modules", "6.99.0-7-test", "kernel")
	for _, d := range []string{mods, filepath.Join(root, "DEBIAN")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	control := "Package: linux-image-6.99.0-7-test\nVersion: 6.99.1-1\nArchitecture: arm64\nMaintainer: btfembed tests <tests@example.org>\nDescription: modules of " + strconv.FormatInt(size>>20, 10) + " MiB of zeros\n"
	if err := os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		f, err := os.Create(filepath.Join(mods, fmt.Sprintf("bomb%02d.ko", i)))
		if err == nil {
			err = f.Truncate(size)
			f.Close()
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	if b, err := exec.Command("dpkg-deb", "--root-owner-group", "-Zzstd", "--build", root, deb).CombinedOutput(); err != nil {
		tb.Fatalf("dpkg-deb --build: %v: %s", err, b)
	}
	return deb
}

// maxImportRSS is the bound on a hostile input's peak RSS (issue 9).
const maxImportRSS = 1 << 30

// TestImportPeakRSS imports issue 33's 139 KB package whose 11 modules
// inflate to 380 MiB each, in a child process (this test binary as
// btfembed), and measures its peak RSS with /usr/bin/time. The memory
// budget bounds the bytes held at once (768 MiB), but without a limit the
// Go collector let the heap grow past twice that: 1.95 GB. The import
// must report the package's modules as skipped and stay under 1 GiB. With
// BTFEMBED_BOMB_DIR set, the package is kept there, to measure other
// builds on it.
func TestImportPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 4 GiB of zeros from a package")
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Skip("/usr/bin/time not installed")
	}
	dir := t.TempDir()
	if keep := os.Getenv("BTFEMBED_BOMB_DIR"); keep != "" {
		dir = keep
	}
	deb := bombDeb(t, dir, 11, 380<<20)
	st, err := os.Stat(deb)
	if err != nil {
		t.Fatal(err)
	}
	rssFile := filepath.Join(t.TempDir(), "rss")
	args := strings.Join([]string{"corpus", "import", "-o", filepath.Join(t.TempDir(), "out"), deb}, "\n")
	// A hang (a reader waiting on the budget forever) fails the test
	// rather than the whole binary.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/time", "-f", "%M", "-o", rssFile, os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, signalImportEnv+"="+args, cache.EnvVar+"=off")
	out, _ := cmd.CombinedOutput() // the child always exits 4
	if ctx.Err() != nil {
		t.Fatalf("import still running after 5 minutes:\n%s", out)
	}
	b, err := os.ReadFile(rssFile)
	if err != nil {
		t.Fatalf("no peak RSS from /usr/bin/time: %v\n%s", err, out)
	}
	// The last line: GNU time says first that the command exited 4.
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		t.Fatalf("/usr/bin/time said %q: %v", b, err)
	}
	t.Logf("%s (%d KB): peak RSS %d MiB\n%s", filepath.Base(deb), st.Size()>>10, kib>>10, out)
	if !strings.Contains(string(out), deb) || !strings.Contains(string(out), "skipped") {
		t.Errorf("output does not report the package's modules as skipped:\n%s", out)
	}
	if kib<<10 >= maxImportRSS {
		t.Errorf("peak RSS %d MiB, want under %d MiB", kib>>10, maxImportRSS>>20)
	}
}

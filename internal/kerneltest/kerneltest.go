// Package kerneltest gives tests the real kernel BTF the project ships in
// testdata/btfhub (BTFHub-archive layout, four Debian kernels on two
// architectures) and the running kernel's, read once per test binary and
// the testdata kernels decompressed once per machine (see readArchive).
// Derived caches costlier results the same way (BTF pahole makes from a
// kernel's DWARF), Debian686PAE fetches a kernel without BTF and its
// debug package from Debian's archive, and DebianAmd64 more builds of a
// Debian kernel family, for the VM tests, when asked to.
//
// It reads the archives directly rather than through internal/corpus so
// that the lowest packages (rawbtf, coremin, distill) can test against
// real kernels without depending on the corpus reader they feed.
package kerneltest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/therootcompany/xz"
	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/atomicfile"
)

// Kernel is one kernel's raw vmlinux BTF.
type Kernel struct {
	Name    string // e.g. "debian/12/x86_64/6.1.0-47-amd64"
	Arch    string
	Release string
	BTF     []byte
}

// Dir is the repository's testdata directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

var load = sync.OnceValues(func() ([]Kernel, error) {
	paths, err := filepath.Glob(filepath.Join(Dir(), "btfhub", "*", "*", "*", "*.btf.tar.xz"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	kernels := make([]Kernel, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() {
			raw, err := readArchive(p)
			rel, _ := filepath.Rel(filepath.Join(Dir(), "btfhub"), p)
			rel = strings.TrimSuffix(filepath.ToSlash(rel), ".btf.tar.xz")
			parts := strings.Split(rel, "/")
			kernels[i] = Kernel{Name: rel, Arch: parts[2], Release: parts[3], BTF: raw}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", paths[i], err)
		}
	}
	return kernels, nil
})

// readArchive returns the BTF of a BTFHub archive. Decompressing xz is
// most of what reading a kernel costs, and every test binary reads the
// same four, so the result is cached across processes in a file named by
// the archive's digest, written atomically.
func readArchive(path string) ([]byte, error) {
	archive, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(archive)
	cached := filepath.Join(cacheDir(), hex.EncodeToString(sum[:])+".btf")
	if b, err := os.ReadFile(cached); err == nil {
		return b, nil
	}
	b, err := unpackArchive(archive)
	if err != nil {
		return nil, err
	}
	// The cache only saves time: a failure to write it is no test failure.
	if os.MkdirAll(filepath.Dir(cached), 0o755) == nil {
		_ = atomicfile.WriteFile(cached, b)
	}
	return b, nil
}

// cacheDir holds decompressed testdata kernels: under the user's cache
// directory (go clean -cache does not remove it; any file there can be
// deleted at any time), else the temporary directory.
func cacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "btfembed-test", "kernels")
}

// unpackArchive returns the .btf member of a .tar.xz.
func unpackArchive(archive []byte) ([]byte, error) {
	zr, err := xz.NewReader(bytes.NewReader(archive), 0)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("no .btf member: %w", err)
		}
		if strings.HasSuffix(h.Name, ".btf") {
			return io.ReadAll(tr)
		}
	}
}

// Corpus returns the testdata kernels, sorted by name.
func Corpus(tb testing.TB) []Kernel {
	tb.Helper()
	ks, err := load()
	if err != nil {
		tb.Fatal(err)
	}
	return ks
}

// ByName returns the testdata kernel whose Name ends with suffix.
func ByName(tb testing.TB, suffix string) Kernel {
	tb.Helper()
	for _, k := range Corpus(tb) {
		if strings.HasSuffix(k.Name, suffix) {
			return k
		}
	}
	tb.Fatalf("no testdata kernel %q", suffix)
	return Kernel{}
}

// RunningBTF is the running kernel's BTF (shared: do not modify it), for
// tests that include it when present rather than skip without it.
var RunningBTF = sync.OnceValues(func() ([]byte, error) {
	return os.ReadFile("/sys/kernel/btf/vmlinux")
})

// Running returns the running kernel's BTF (shared: do not modify it),
// skipping the test where the kernel exposes none.
func Running(tb testing.TB) Kernel {
	tb.Helper()
	raw, err := RunningBTF()
	if err != nil {
		tb.Skipf("running kernel BTF: %v", err)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		tb.Fatal(err)
	}
	return Kernel{
		Name:    "running",
		Arch:    unix.ByteSliceToString(u.Machine[:]),
		Release: unix.ByteSliceToString(u.Release[:]),
		BTF:     raw,
	}
}

// CiliumTestdataDir is CiliumTestdata for code without a testing.TB, such
// as examples.
var CiliumTestdataDir = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cilium/ebpf").Output()
	if err != nil {
		return "", fmt.Errorf("locate github.com/cilium/ebpf: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "btf", "testdata"), nil
})

// CiliumTestdata is cilium/ebpf's btf/testdata directory in the module
// cache. It ships real CO-RE test objects (relocs*.elf) and pahole's
// distilled base for a kernel module (btf_testmod.btf.base).
func CiliumTestdata(tb testing.TB) string {
	tb.Helper()
	dir, err := CiliumTestdataDir()
	if err != nil {
		tb.Skip(err)
	}
	return dir
}

// SharedCorpus is the directory of the large shared kernel corpus (kernel
// images, a distro package, module files), from $BTFEMBED_CORPUS, which
// .ci/run sets. Tests that need it skip, saying so, when it is unset.
func SharedCorpus(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("BTFEMBED_CORPUS")
	if dir == "" {
		tb.Skip("BTFEMBED_CORPUS is unset: set it to the shared kernel corpus (.ci/run uses ../shared/corpus)")
	}
	return dir
}

package kerneltest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/internal/atomicfile"
)

// SharedArchive is a kernel of the shared corpus (SharedCorpus) in
// BTFHub-archive layout, rel being its path under the corpus's btfhub
// directory without .btf.tar.xz ("debian/11/x86_64/5.10.0-32-amd64"),
// decompressed once per machine like the testdata kernels. It skips the
// test where the shared corpus is not set.
func SharedArchive(tb testing.TB, rel string) Kernel {
	tb.Helper()
	path := filepath.Join(SharedCorpus(tb), "btfhub", filepath.FromSlash(rel)+".btf.tar.xz")
	raw, err := readArchive(path)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	parts := strings.Split(rel, "/")
	return Kernel{Name: rel, Arch: parts[len(parts)-2], Release: parts[len(parts)-1], BTF: raw}
}

// NoBTF is the shared corpus's kernel built without BTF
// (nobtf/x86_64, Linux 6.1.176): its BTF made by pahole from the DWARF of
// its vmlinux, as BTFHub makes BTF for such kernels, once per machine
// (about 3 s and 450 MB of memory). It skips the test under -short, where
// the shared corpus is not set or where pahole is not installed.
func NoBTF(tb testing.TB) Kernel {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: making BTF from DWARF with pahole takes seconds")
	}
	path := filepath.Join(SharedCorpus(tb), "nobtf", "x86_64", "vmlinux-6.1.176.xz")
	pahole, err := exec.LookPath("pahole")
	if err != nil {
		tb.Skip("pahole is not installed (Debian: apt-get install pahole)")
	}
	k := Kernel{Name: "nobtf/x86_64/6.1.176", Arch: "x86_64", Release: "6.1.176"}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	cached := filepath.Join(cacheDir(), "pahole-"+hex.EncodeToString(h.Sum(nil))+".btf")
	if k.BTF, err = os.ReadFile(cached); err == nil {
		return k
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		tb.Fatal(err)
	}
	zr, err := xz.NewReader(f, 0)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	dir := tb.TempDir()
	vmlinux := filepath.Join(dir, "vmlinux")
	out, err := os.Create(vmlinux)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	// The flags of the kernel's own build for 6.1 with pahole 1.24
	// (scripts/pahole-flags.sh): floats, parallel and deterministic.
	btfPath := filepath.Join(dir, "vmlinux.btf")
	cmd := exec.Command(pahole, "-F", "dwarf", "--btf_gen_floats", "-j", "--lang_exclude=rust", "--btf_encode_detached", btfPath, vmlinux)
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("pahole on %s: %v\n%s", path, err, msg)
	}
	if k.BTF, err = os.ReadFile(btfPath); err != nil {
		tb.Fatal(err)
	}
	if os.MkdirAll(filepath.Dir(cached), 0o755) == nil {
		_ = atomicfile.WriteFile(cached, k.BTF)
	}
	return k
}

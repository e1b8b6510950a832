package kerneltest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/atomicfile"
)

// DebianAmd64 returns the linux-image-<release>-unsigned packages of
// Debian 12's amd64 kernels of these releases ("6.1.0-50-amd64"), by
// release, fetched with apt-get download into the test cache once and
// named there by digest; later calls, in any process, use the cache
// without the network. The family test needs builds of 6.1.0-47-amd64's
// family that the shared corpus does not have (its images are one build
// per flavour). It skips the test unless $BTFEMBED_FETCH is set (70 MB a
// package), when apt-get is missing, when Debian's archive cannot be
// reached, and when it no longer has a release (it keeps the ABIs of the
// current point and security releases only).
//
// apt uses the machine's own package lists: amd64 is the architecture
// the lists are for on the hosts that run the VM tests.
func DebianAmd64(tb testing.TB, releases ...string) map[string]string {
	tb.Helper()
	if os.Getenv(FetchEnv) == "" {
		tb.Skipf("Debian 12's amd64 kernel packages %s are 70 MB each from Debian's archive: set %s=1 to fetch them (cached afterwards)", strings.Join(releases, ", "), FetchEnv)
	}
	needTools(tb, "Debian packages cannot be fetched here", "apt-get")
	out := map[string]string{}
	for _, r := range releases {
		out[r] = fetched[string](tb)(fetchAmd64(tb.Context(), r))
	}
	return out
}

// fetchAmd64 returns the cached package of release, fetching it first if
// the cache does not have it. The index, amd64-<release>.txt, names the
// package's digest.
func fetchAmd64(ctx context.Context, release string) (string, error) {
	dir := debianDir()
	index := filepath.Join(dir, "amd64-"+release+".txt")
	if name, err := os.ReadFile(index); err == nil && digestDeb.Match(name) {
		if p := filepath.Join(dir, string(name)); fileExists(p) {
			return p, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	pkg := "linux-image-" + release + "-unsigned"
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "apt-get", "-q", "download", pkg)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &archiveError{debianArchive, fmt.Errorf("apt-get download %s: %w: %s", pkg, err, strings.TrimSpace(string(out)))}
	}
	p, err := keepDownload(tmp, pkg, dir)
	if err != nil {
		return "", err
	}
	return p, atomicfile.WriteFile(index, []byte(filepath.Base(p)))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

package kerneltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BuiltKernel is a kernel built here from source, without BTF.
type BuiltKernel struct {
	Release string // uname -r: "4.15.17"
	Image   string // path of its bzImage
	VMLinux string // path of its ELF vmlinux with DWARF
}

// buildTools are what scripts/build-kernel-4.15.sh runs.
var buildTools = []string{"curl", "sha256sum", "flock", "dpkg-deb", "tar", "bzip2", "xz", "make", "gcc", "ld", "bc", "perl"}

// exitUnreachable is the script's exit status when the source package
// cannot be downloaded.
const exitUnreachable = 3

// Ubuntu1804Kernel returns a Linux 4.15 kernel built from Ubuntu 18.04's
// kernel source by scripts/build-kernel-4.15.sh, cached in the test
// cache (kernel-4.15/) after the first build: 128 MB of download and
// about 9 minutes of gcc on 2 cores. It is older than global data (5.2),
// which no kernel of the corpus is. It skips the test unless
// $BTFEMBED_FETCH is set, where a tool the build needs is missing, and
// where the archive cannot be reached.
func Ubuntu1804Kernel(tb testing.TB) BuiltKernel {
	tb.Helper()
	if os.Getenv(FetchEnv) == "" {
		tb.Skipf("the 4.15 kernel is built from Ubuntu 18.04's kernel source (128 MB, about 9 minutes on 2 cores): set %s=1 to build it (cached afterwards)", FetchEnv)
	}
	needTools(tb, "scripts/build-kernel-4.15.sh cannot build the 4.15 kernel here", buildTools...)
	return fetched[BuiltKernel](tb)(build415(tb.Context(), filepath.Join(filepath.Dir(cacheDir()), "kernel-4.15")))
}

// build415 runs the build script into dir (a no-op when dir holds its
// outputs) and returns them.
func build415(ctx context.Context, dir string) (BuiltKernel, error) {
	script := filepath.Join(Dir(), "..", "scripts", "build-kernel-4.15.sh")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		err = fmt.Errorf("%s: %w:\n%s", script, err, bytes.TrimSpace(out.Bytes()))
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == exitUnreachable {
			return BuiltKernel{}, &archiveError{"Ubuntu's archive", err}
		}
		return BuiltKernel{}, err
	}
	release, err := os.ReadFile(filepath.Join(dir, "release"))
	if err != nil {
		return BuiltKernel{}, err
	}
	return BuiltKernel{
		Release: strings.TrimSpace(string(release)),
		Image:   filepath.Join(dir, "vmlinuz"),
		VMLinux: filepath.Join(dir, "vmlinux"),
	}, nil
}

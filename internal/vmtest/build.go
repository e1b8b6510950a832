package vmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build compiles the Go main package pkg (an import path of this module) as
// a static binary for a Linux guest of arch, as /init or another program of
// the initramfs needs: CGO_ENABLED=0, so no dynamic loader is needed, and
// -trimpath so no host path is embedded. It returns the binary's contents.
func Build(ctx context.Context, pkg, arch string) ([]byte, error) {
	goarch, err := GOARCH(arch)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "btfembed-vmtest-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "bin")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s for %s: %w\n%s", pkg, goarch, err, msg)
	}
	return os.ReadFile(out)
}

// Require skips the test, saying why, where guests of arch cannot boot:
// under -short (a boot takes seconds of CPU) or without qemu.
func Require(tb testing.TB, arch string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("booting kernels in qemu takes seconds per boot: skipped under -short")
	}
	if err := Available(arch); err != nil {
		tb.Skip(err)
	}
}

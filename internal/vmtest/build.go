package vmtest

import (
	"context"
	"encoding/json"
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
	return BuildWith(ctx, pkg, arch, nil)
}

// BuildWith is Build with files of the source tree replaced, by absolute
// path, through go build's -overlay: the field test builds
// examples/execsnoop with its own payload in place of the committed
// kernelbtf_<goarch>.btfembed, as a user who generated the payload for
// their own kernels would have it (go:embed reads overlaid files).
func BuildWith(ctx context.Context, pkg, arch string, replace map[string][]byte) ([]byte, error) {
	goarch, err := GOARCH(arch)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "btfembed-vmtest-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	args := []string{"build", "-trimpath", "-ldflags=-s -w"}
	if len(replace) > 0 {
		overlay := map[string]map[string]string{"Replace": {}}
		i := 0
		for path, data := range replace {
			file := filepath.Join(dir, fmt.Sprintf("replace-%d", i))
			i++
			if err := os.WriteFile(file, data, 0o644); err != nil {
				return nil, err
			}
			overlay["Replace"][path] = file
		}
		js, err := json.Marshal(overlay)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "overlay.json"), js, 0o644); err != nil {
			return nil, err
		}
		args = append(args, "-overlay", filepath.Join(dir, "overlay.json"))
	}
	out := filepath.Join(dir, "bin")
	cmd := exec.CommandContext(ctx, "go", append(args, "-o", out, pkg)...)
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

package coremin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// bpftoolLoads checks "bpftool btf dump file" loads blob (split over
// base if base is not nil). It logs and returns when bpftool is missing.
func bpftoolLoads(t *testing.T, blob, base []byte) {
	t.Helper()
	bpftool, err := exec.LookPath("bpftool")
	if err != nil {
		t.Log("bpftool not installed: not checking it loads the output")
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "min.btf")
	if err := os.WriteFile(path, blob, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"btf", "dump", "file", path}
	if base != nil {
		basePath := filepath.Join(dir, "base.btf")
		if err := os.WriteFile(basePath, base, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append([]string{"-B", basePath}, args...)
	}
	if out, err := exec.Command(bpftool, args...).CombinedOutput(); err != nil {
		t.Errorf("bpftool %v: %v\n%s", args, err, out)
	}
}

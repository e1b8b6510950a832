package emit

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestEmbeddedObjects lists a package laid out as bpf2go lays it out, in
// a module of its own: objects embedded behind GOARCH constraints, a file
// that embeds something else, and one whose pattern matches nothing yet
// (a payload not generated), which makes go list drop the package's
// embedded files.
func TestEmbeddedObjects(t *testing.T) {
	dir := t.TempDir()
	el, err := os.ReadFile(filepath.Join(kerneltest.Dir(), "objects", "fields-el.o"))
	if err != nil {
		t.Fatal(err)
	}
	eb, err := os.ReadFile(filepath.Join(kerneltest.Dir(), "objects", "fields-eb.o"))
	if err != nil {
		t.Fatal(err)
	}
	embedding := func(constraint, file string) string {
		src := "package agent\n\nimport _ \"embed\"\n\n//go:embed " + file + "\nvar _ []byte\n"
		if constraint != "" {
			src = "//go:build " + constraint + "\n\n" + src
		}
		return src
	}
	for name, content := range map[string]string{
		"go.mod":           "module example.com/agent\n\ngo 1.26\n",
		"bpf_x86_bpfel.go": embedding("386 || amd64", "bpf_x86_bpfel.o"),
		"bpf_x86_bpfel.o":  string(el),
		// A tab after go:embed, which the go command accepts.
		"bpf_arm64_bpfel.go":       "//go:build arm64\n\npackage agent\n\nimport _ \"embed\"\n\n//go:embed\tbpf_arm64_bpfel.o\nvar _ []byte\n",
		"bpf_arm64_bpfel.o":        string(el),
		"generic_bpfeb.go":         embedding("s390x", "generic_bpfeb.o"),
		"generic_bpfeb.o":          string(eb),
		"notes.go":                 embedding("", "notes.txt"),
		"notes.txt":                "not BPF\n",
		"kernelbtf_arm64.go":       embedding("arm64", "kernelbtf_arm64.btfembed"),
		"agent_test.go":            embedding("", "test_bpfel.o"),
		"test_bpfel.o":             string(el),
		"unused_riscv64_bpfel.o":   string(el), // not embedded
		"bpf_x86_bpfel_windows.go": embedding("", "test_bpfel.o"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := EmbeddedObjects(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"386":   {"bpf_x86_bpfel.o"},
		"amd64": {"bpf_x86_bpfel.o"},
		"arm64": {"bpf_arm64_bpfel.o"},
		"s390x": {"generic_bpfeb.o"},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("got %v, want %v", got, want)
	}

	if err := os.WriteFile(filepath.Join(dir, "bpf_x86_bpfel.go"), []byte("package agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"bpf_arm64_bpfel.go", "generic_bpfeb.go"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := EmbeddedObjects(t.Context(), dir); !errors.Is(err, ErrNoEmbeddedObjects) {
		t.Errorf("package without objects: %v, want ErrNoEmbeddedObjects", err)
	}
}

// TestEmbeddedObjectsErrors: a directory go list cannot describe gives an
// error that names it, and a cancelled context stops go list.
func TestEmbeddedObjectsErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := EmbeddedObjects(t.Context(), missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing directory: error %v does not name %s", err, missing)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := EmbeddedObjects(ctx, "."); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v, want context.Canceled", err)
	}
}

// TestEmbeddedObjectsRefuses is issue 18's discovery that followed a
// symlink to an object outside the package: where discovery resolves the
// embed patterns itself (go list gave up on a pattern that matches
// nothing yet), it refuses what go:embed refuses.
func TestEmbeddedObjectsRefuses(t *testing.T) {
	el, err := os.ReadFile(filepath.Join(kerneltest.Dir(), "objects", "fields-el.o"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "bpf_x86_bpfel.o")
	if err := os.WriteFile(outside, el, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pattern, want string
		setup               func(dir string) error
	}{
		{"symlinked object", "bpf_x86_bpfel.o", "a symlink", func(dir string) error {
			return os.Symlink(outside, filepath.Join(dir, "bpf_x86_bpfel.o"))
		}},
		{"symlinked directory", "objs/bpf_x86_bpfel.o", "objs: a symlink", func(dir string) error {
			return os.Symlink(filepath.Dir(outside), filepath.Join(dir, "objs"))
		}},
		{"nested module", "sub/bpf_x86_bpfel.o", "in another module", func(dir string) error {
			os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
			os.WriteFile(filepath.Join(dir, "sub", "go.mod"), []byte("module example.com/sub\n"), 0o644)
			return os.WriteFile(filepath.Join(dir, "sub", "bpf_x86_bpfel.o"), el, 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"go.mod":             "module example.com/agent\n\ngo 1.26\n",
				"bpf_x86_bpfel.go":   "//go:build amd64\n\npackage agent\n\nimport _ \"embed\"\n\n//go:embed " + tc.pattern + "\nvar _ []byte\n",
				"kernelbtf_amd64.go": "//go:build amd64\n\npackage agent\n\nimport _ \"embed\"\n\n//go:embed kernelbtf_amd64.btfembed\nvar _ []byte\n",
			}
			for name, content := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.setup(dir); err != nil {
				t.Fatal(err)
			}
			got, err := EmbeddedObjects(t.Context(), dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error saying %q", got, err, tc.want)
			}
		})
	}
}

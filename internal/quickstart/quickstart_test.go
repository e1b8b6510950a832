package quickstart

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the clone this test runs in.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// readmeBlock returns the indented command block of README.md whose first
// line starts with first, one command per line.
func readmeBlock(tb testing.TB, first string) []string {
	tb.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot(tb), "README.md"))
	if err != nil {
		tb.Fatal(err)
	}
	var block []string
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		cmd, indented := strings.CutPrefix(line, "    ")
		switch {
		case len(block) == 0 && indented && strings.HasPrefix(cmd, first):
			block = append(block, cmd)
		case len(block) > 0 && indented && cmd != "":
			block = append(block, cmd)
		case len(block) > 0:
			return block
		}
	}
	if len(block) == 0 {
		tb.Fatalf("README.md has no indented block starting with %q", first)
	}
	return block
}

// TestREADMETestCommandIsCI holds README.md's test command and .ci/run
// together: every line of the README's block is a line of .ci/run.
func TestREADMETestCommandIsCI(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join(repoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(ci), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	block := readmeBlock(t, "go vet ")
	for _, cmd := range block {
		if !lines[cmd] {
			t.Errorf("README.md runs the tests with %q, .ci/run does not", cmd)
		}
	}
	if !lines["go test -count=1 ./..."] || !slicesContains(block, "go test -count=1 ./...") {
		t.Errorf("want `go test -count=1 ./...` in both README.md's test block %q and .ci/run", block)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestFreshModule is a newcomer's first hour, run as written: a new module
// next to the clone pins btfembed and bpf2go with README.md's install
// lines, keeps the go directive btfembed declares (go.mod's floor must not
// force users up), imports this machine's kernel with the README's first
// corpus command, and then does what the README's bpf2go section says
// with the execsnoop agent's sources and committed bpf2go outputs: go
// generate (its btfembed line; the bpf2go line needs clang), and builds
// for amd64 and arm64, each with its own payload.
func TestFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads modules and builds btfembed in a new module")
	}
	root := repoRoot(t)
	floor := goDirective(t, filepath.Join(root, "go.mod"))

	work := t.TempDir()
	if err := os.Symlink(root, filepath.Join(work, "btfembed")); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(work, "agent")
	if err := os.MkdirAll(filepath.Join(agent, "bpf"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off", "GOPACKAGE=", "BTFEMBED_CORPUS=",
		"BTFEMBED_CACHE="+t.TempDir(), "CGO_ENABLED=0")
	run := func(dir string, args []string, extraEnv ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(env, extraEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}

	run(agent, []string{"go", "mod", "init", "example.com/agent"})
	run(agent, []string{"go", "mod", "edit", "-go=" + floor})
	for _, line := range readmeBlock(t, "go mod edit -require github.com/btfembed/btfembed") {
		run(agent, strings.Fields(line))
	}
	if got := goDirective(t, filepath.Join(agent, "go.mod")); got != floor {
		t.Errorf("adding btfembed moved the module's go directive from %s to %s", floor, got)
	}

	// The agent: execsnoop's sources and bpf2go outputs, with a corpus
	// of its own.
	example := filepath.Join(root, "examples", "execsnoop")
	for _, name := range []string{"tracer.go", "bpf_x86_bpfel.go", "bpf_x86_bpfel.o", "bpf_arm64_bpfel.go", "bpf_arm64_bpfel.o", "bpf/execsnoop.c"} {
		copyFile(t, filepath.Join(example, name), filepath.Join(agent, name))
	}
	main, err := os.ReadFile(filepath.Join(example, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	const exampleLine = "//go:generate go tool btfembed -corpus ../../testdata/btfhub\n"
	if !bytes.Contains(main, []byte(exampleLine)) {
		t.Fatalf("examples/execsnoop/main.go has no line %q", exampleLine)
	}
	main = bytes.Replace(main, []byte(exampleLine), []byte("//go:generate go tool btfembed -corpus corpus\n"), 1)
	if err := os.WriteFile(filepath.Join(agent, "main.go"), main, 0o644); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join(root, "testdata", "btfhub"), filepath.Join(agent, "corpus"))
	importLine := readmeBlock(t, "go tool btfembed corpus import")
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err == nil {
		out := run(agent, strings.Fields(importLine[0]))
		t.Logf("%s:\n%s", importLine[0], out)
	} else {
		t.Logf("not run, this kernel has no BTF: %s", importLine[0])
	}

	out := run(agent, []string{"go", "generate", "-run", "btfembed"})
	t.Logf("go generate:\n%s", out)
	for _, name := range []string{"kernelbtf_amd64.go", "kernelbtf_amd64.btfembed", "kernelbtf_arm64.go", "kernelbtf_arm64.btfembed", "kernelbtf_other.go"} {
		if _, err := os.Stat(filepath.Join(agent, name)); err != nil {
			t.Errorf("go generate did not write %s: %v", name, err)
		}
	}
	for _, goarch := range []string{"amd64", "arm64"} {
		bin := filepath.Join(work, "agent-"+goarch)
		run(agent, []string{"go", "build", "-o", bin, "."}, "GOARCH="+goarch)
		if fi, err := os.Stat(bin); err != nil || fi.Size() == 0 {
			t.Errorf("go build for %s wrote no binary: %v", goarch, err)
		}
	}
	run(agent, []string{"go", "vet", "."})
}

// goDirective is the go version a go.mod declares.
func goDirective(tb testing.TB, gomod string) string {
	tb.Helper()
	data, err := os.ReadFile(gomod)
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	tb.Fatalf("%s has no go directive", gomod)
	return ""
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func copyTree(tb testing.TB, from, to string) {
	tb.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		copyFile(tb, p, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/emit"
	"github.com/btfembed/btfembed/internal/kernelarch"
	"github.com/btfembed/btfembed/internal/kerneltest"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

// TestExecsnoopEmbedded is the end-to-end check of the main job: generate
// embedded BTF from a corpus that includes the running kernel's BTF, load
// execsnoop with it (not with the kernel's own), attach, exec a program and
// see its event arrive.
func TestExecsnoopEmbedded(t *testing.T) {
	running := kerneltest.Running(t)
	corpusDir := t.TempDir()
	// Our corpus layout: <distro>/<version>/<arch>/<release>.btf.
	kdir := filepath.Join(corpusDir, "host", "0", running.Arch)
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, running.Release+".btf"), running.BTF, 0o644); err != nil {
		t.Fatal(err)
	}
	// The objects bpf2go made for this GOARCH, found as the go:generate
	// mode finds them.
	embedded, err := emit.EmbeddedObjects(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(embedded[runtime.GOARCH]) == 0 {
		t.Skipf("execsnoop embeds no object for GOARCH %s", runtime.GOARCH)
	}
	res, err := generator.Generate(context.Background(), &generator.Args{
		Objects: embedded[runtime.GOARCH],
		Corpus:  []string{filepath.Join(kerneltest.Dir(), "btfhub"), corpusDir},
	})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := res.ForArch(runtime.GOARCH).Payload()
	if err != nil {
		t.Fatal(err)
	}
	assets, err := btfruntime.Open(payload)
	if err != nil {
		t.Fatal(err)
	}

	mountTracefs(t)
	tr, err := newTracer(assets, &btfruntime.SelectOptions{ForceEmbedded: true})
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
		t.Skipf("bpf() is refused on this machine, so nothing can be loaded: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.Selection.Source != btfruntime.SourceEmbedded || tr.Selection.Key.Release != running.Release {
		t.Fatalf("selected %s %s, want the embedded entry for %s", tr.Selection.Source, tr.Selection.Key, running.Release)
	}

	// A program with a name of our own, so its event is recognizable.
	prog := filepath.Join(t.TempDir(), "btfembed-e2e")
	self, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}

	tr.SetDeadline(time.Now().Add(10 * time.Second))
	for {
		ev, err := tr.Next()
		if err != nil {
			t.Fatalf("no exec event for %s: %v", prog, err)
		}
		if ev.FilenameString() != prog {
			continue // another exec on the machine
		}
		if ev.CommString() != "btfembed-e2e" || int(ev.Pid) != cmd.Process.Pid || int(ev.Ppid) != os.Getpid() {
			t.Fatalf("event comm %q pid %d ppid %d, want btfembed-e2e %d %d",
				ev.CommString(), ev.Pid, ev.Ppid, cmd.Process.Pid, os.Getpid())
		}
		break
	}

	// The optional count_exec needs 6.2: on this kernel it is predicted
	// to load, loads, and counted the exec in the test's cgroup, which
	// the child inherited.
	if !tr.Selection.Predicted || tr.Skipped != "" {
		t.Fatalf("predicted %v, skipped %q: want count_exec loaded on %s", tr.Selection.Predicted, tr.Skipped, running.Release)
	}
	dir, err := ownCgroup2()
	if err != nil {
		t.Skipf("count_exec runs, but its count cannot be read here: %v", err)
	}
	n, ok, err := tr.ExecsInCgroup(dir)
	if err != nil || !ok || n == 0 {
		t.Fatalf("execs in cgroup %s: %d, %v, %v; want at least the test's", dir, n, ok, err)
	}
}

// ownCgroup2 is the directory of this process's cgroup v2.
func ownCgroup2() (string, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var rel string
	for _, line := range strings.Split(string(cg), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(mi), "\n") {
		// ... mount-point ... - fstype source options
		pre, post, ok := strings.Cut(line, " - ")
		if f, g := strings.Fields(pre), strings.Fields(post); ok && len(f) > 4 && len(g) > 0 && g[0] == "cgroup2" && rel != "" {
			return filepath.Join(f[4], rel), nil
		}
	}
	return "", errors.New("no cgroup v2 mounted, or this process is in none")
}

// tracefsDir is where tracepoints are found (cilium/ebpf also looks in
// debugfs's tracing directory).
const tracefsDir = "/sys/kernel/tracing"

// mountTracefs makes sure the tracepoint execsnoop attaches to can be found:
// it mounts tracefs, as root, where neither tracefs nor debugfs's tracing
// directory is mounted, and unmounts it after the test. It skips, saying
// why, only where that cannot be done.
func mountTracefs(t *testing.T) {
	t.Helper()
	for _, dir := range []string{tracefsDir, "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(filepath.Join(dir, "events")); err == nil {
			return
		}
	}
	if os.Geteuid() != 0 {
		t.Skipf("tracefs is not mounted on %s and only root can mount it (mount -t tracefs nodev %s)", tracefsDir, tracefsDir)
	}
	if err := unix.Mount("nodev", tracefsDir, "tracefs", 0, ""); err != nil {
		t.Skipf("tracefs is not mounted and mounting it on %s failed: %v", tracefsDir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(tracefsDir, 0); err != nil {
			t.Errorf("unmount the tracefs the test mounted: %v", err)
		}
	})
}

// TestGeneratedIsCurrent reruns the command in the header of the
// committed kernelbtf_amd64.go, as written but outside go generate and
// into a temporary directory, checks the committed kernelbtf_<goarch>.go
// files and payloads are what it writes, and that the header's command is
// the go:generate line.
func TestGeneratedIsCurrent(t *testing.T) {
	args := generateArgs(t)
	header := "// Command: go tool btfembed -pkg main " + strings.Join(args, " ") + "\n"
	src, err := os.ReadFile("kernelbtf_amd64.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^// Command: (go tool btfembed .*)$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("kernelbtf_amd64.go has no Command line")
	}
	command := strings.Fields(string(m[1]))
	out := t.TempDir()
	cmd := exec.Command(command[0], append(command[1:], "-q", "-output", filepath.Join(out, "kernelbtf.go"))...)
	// A cache of the test's own: tests never write into the user's.
	cmd.Env = append(os.Environ(), "GOPACKAGE=", "BTFEMBED_CORPUS=", "BTFEMBED_CACHE="+t.TempDir())
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", m[1], err, msg)
	}
	wrote, err := filepath.Glob(filepath.Join(out, "kernelbtf*"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob("kernelbtf*")
	if err != nil {
		t.Fatal(err)
	}
	if len(wrote) != len(committed) {
		t.Fatalf("btfembed writes %d files, %d are committed: run go generate -run btfembed ./examples/execsnoop", len(wrote), len(committed))
	}
	for _, name := range committed {
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Ext(name) == ".go" {
			if !bytes.Contains(want, []byte(header)) {
				t.Errorf("%s: header does not record %q", name, header)
			}
			// The header of the rerun records its -q and -output too.
			got = regexp.MustCompile(`(?m)^// Command: .*\n`).ReplaceAll(got, []byte(header))
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate -run btfembed ./examples/execsnoop", name)
		}
	}
}

// generateArgs are the arguments of main.go's btfembed go:generate line.
func generateArgs(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate go tool btfembed "); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatal("main.go has no go:generate line running btfembed")
	return nil
}

// TestBinaryEmbedsItsArch builds execsnoop for amd64 and arm64 and checks
// each binary embeds its own GOARCH's payload, holding only kernels of its
// architecture, and not the other's.
func TestBinaryEmbedsItsArch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds execsnoop twice")
	}
	payloads := map[string][]byte{}
	for _, goarch := range []string{"amd64", "arm64"} {
		p, err := os.ReadFile("kernelbtf_" + goarch + ".btfembed")
		if err != nil {
			t.Fatal(err)
		}
		assets, err := btfruntime.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := assets.Kernels()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			t.Fatalf("%s payload holds no kernel", goarch)
		}
		for _, k := range keys {
			if k.Arch != kernelarch.OfGOARCH(goarch) {
				t.Errorf("%s payload holds %s", goarch, k)
			}
		}
		payloads[goarch] = p
	}
	if bytes.Equal(payloads["amd64"], payloads["arm64"]) {
		t.Fatal("amd64 and arm64 payloads are the same")
	}
	for goarch := range payloads {
		bin := filepath.Join(t.TempDir(), "execsnoop")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GOARCH=%s go build: %v\n%s", goarch, err, msg)
		}
		exe, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		for other, p := range payloads {
			if got, want := bytes.Contains(exe, p), other == goarch; got != want {
				t.Errorf("GOARCH=%s binary embeds the %s payload: %v, want %v", goarch, other, got, want)
			}
		}
	}
}

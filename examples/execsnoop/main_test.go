package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/runtime"
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
	res, err := generator.Generate(context.Background(), &generator.Args{
		Objects: []string{filepath.Join("bpf", "execsnoop_bpfel.o")},
		Corpus:  []string{filepath.Join(kerneltest.Dir(), "btfhub"), corpusDir},
	})
	if err != nil {
		t.Fatal(err)
	}
	assets, err := runtime.Open(res.Payload)
	if err != nil {
		t.Fatal(err)
	}

	mountTracefs(t)
	tr, err := newTracer(assets, &runtime.SelectOptions{ForceEmbedded: true})
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
		t.Skipf("bpf() is refused on this machine, so nothing can be loaded: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.Selection.Source != runtime.SourceEmbedded || tr.Selection.Key.Release != running.Release {
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
		return
	}
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

// TestGeneratedIsCurrent reruns the go:generate line into a temporary
// directory and checks the committed kernelbtf.go and payload are what it
// writes.
func TestGeneratedIsCurrent(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate go tool btfembed "); ok {
			args = strings.Fields(rest)
		}
	}
	if args == nil {
		t.Fatal("main.go has no go:generate line running btfembed")
	}
	out := t.TempDir()
	for i, a := range args {
		if a == "kernelbtf.go" && i > 0 && args[i-1] == "-output" {
			args[i] = filepath.Join(out, "kernelbtf.go")
		}
	}
	cmd := exec.Command("go", append([]string{"tool", "btfembed", "-q"}, args...)...)
	cmd.Env = append(os.Environ(), "GOPACKAGE=main")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("btfembed: %v\n%s", err, msg)
	}
	for _, name := range []string{"kernelbtf.go", "kernelbtf.btfembed"} {
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		// The header records -output as given; the test's differs only by -q.
		got = bytes.Replace(got, []byte("btfembed -q "), []byte("btfembed "), 1)
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./examples/execsnoop", name)
		}
	}
}

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/cache"
)

// signalChildEnv makes the test binary a process that writes an output's
// temporary file and waits to be signalled.
const signalChildEnv = "BTFEMBED_SIGNAL_CHILD"

// signalImportEnv makes the test binary run btfembed with these
// newline-separated arguments, signal handling on.
const signalImportEnv = "BTFEMBED_SIGNAL_IMPORT"

func TestMain(m *testing.M) {
	if args := os.Getenv(signalImportEnv); args != "" {
		cleanupOnSignal()
		run(os.Stdout, os.Stderr, strings.Split(args, "\n"))
		os.Exit(4)
	}
	if dir := os.Getenv(signalChildEnv); dir != "" {
		cleanupOnSignal()
		var s atomicfile.Set
		if err := s.AddBytes(filepath.Join(dir, "k.btfembed"), []byte("new")); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		os.Exit(4)
	}
	// Tests never write into the user's cache.
	dir, err := os.MkdirTemp("", "btfembed-cache-test-")
	if err != nil {
		os.Exit(5)
	}
	os.Setenv(cache.EnvVar, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestSignalRemovesTemps interrupts a process holding an uncommitted
// output: it must remove the temporary file, leave the old output and exit
// as the signal says.
func TestSignalRemovesTemps(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "k.btfembed")
			if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), signalChildEnv+"="+dir)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
				cmd.Process.Kill()
				t.Fatalf("child said %q", line)
			}
			cmd.Process.Signal(sig)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("child ended with %v, want exit status %d", err, 128+int(sig))
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}
			if b, _ := os.ReadFile(out); string(b) != "old" {
				t.Errorf("output holds %q, want the old one", b)
			}
		})
	}
}

// TestSignalDuringPahole interrupts a corpus import while pahole makes BTF
// from DWARF: the temporary directory holding the DWARF goes, and pahole
// dies with btfembed.
func TestSignalDuringPahole(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no cc to compile the DWARF vmlinux")
	}
	dir := t.TempDir()
	vmlinux := filepath.Join(dir, "vmlinux-6.99.0-9-dbgtest")
	if b, err := exec.Command("cc", "-g", "-c", "../../internal/corpus/testdata/dwarf/vmlinux.c", "-o", vmlinux).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, b)
	}
	// A pahole that says its version and otherwise reports its pid and
	// waits, as a long run on a real vmlinux would.
	ready := filepath.Join(dir, "pahole.pid")
	script := filepath.Join(dir, "pahole")
	body := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo v1.24; exit 0; fi\necho $$ > " + ready + ".tmp && mv " + ready + ".tmp " + ready + "\nexec sleep 60\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	args := strings.Join([]string{"corpus", "import", "-o", filepath.Join(dir, "out"), vmlinux}, "\n")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), signalImportEnv+"="+args, "PAHOLE="+script, "TMPDIR="+tmp, cache.EnvVar+"=off")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for range 200 {
		if b, err := os.ReadFile(ready); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("pahole never started")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("import ended with %v, want exit status %d", err, 128+int(syscall.SIGTERM))
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("temporary files left in TMPDIR: %v", entries)
	}
	for i := 0; syscall.Kill(pid, 0) == nil; i++ {
		if i == 100 {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("pahole outlived btfembed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

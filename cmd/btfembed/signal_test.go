package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

func TestMain(m *testing.M) {
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

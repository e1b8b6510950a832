package vmtest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// echoInit builds echoinit for x86_64 once per test binary.
var echoInit = sync.OnceValues(func() ([]byte, error) {
	return Build(context.Background(), "github.com/btfembed/btfembed/internal/vmtest/echoinit", "x86_64")
})

// TestRun boots a corpus kernel with a guest told to finish, fail or
// crash, and checks Run reports each: records for a clean end, the guest's
// error, and ErrIncomplete for a guest that never reports its end.
func TestRun(t *testing.T) {
	Require(t, "x86_64")
	kernel := filepath.Join(kerneltest.SharedCorpus(t), "images", "vmlinuz-6.1.0-47-amd64")
	init, err := echoInit()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		end     string
		wantErr string
		is      error
	}{
		{end: "done"},
		{end: "fail", wantErr: "guest failed: asked to fail"},
		{end: "crash", is: ErrIncomplete},
	} {
		t.Run(tc.end, func(t *testing.T) {
			t.Parallel()
			b, err := Run(t.Context(), &Machine{
				Arch:      "x86_64",
				Kernel:    kernel,
				Initramfs: []File{{Path: "init", Mode: 0o755, Data: init}},
				Cmdline:   []string{"vmtest.echo=hello-" + tc.end, "vmtest.end=" + tc.end},
			})
			switch {
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Fatalf("error %v, want %v", err, tc.is)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			case tc.is == nil && tc.wantErr == "" && err != nil:
				t.Fatal(err)
			}
			echo := b.Find("echo")
			if len(echo) != 1 {
				t.Fatalf("%d echo records, want 1; console:\n%s", len(echo), b.Console)
			}
			var got map[string]string
			if err := echo[0].Decode(&got); err != nil {
				t.Fatal(err)
			}
			if got["release"] != "6.1.0-47-amd64" || got["echo"] != "hello-"+tc.end {
				t.Fatalf("echo %v, want release 6.1.0-47-amd64 and echo hello-%s", got, tc.end)
			}
			t.Logf("until /init %v, total %v", b.UntilInit, b.Total)
		})
	}
}

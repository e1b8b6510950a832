package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestFailOnUnloadable: guards-el.o has programs that fail on every
// kernel (missing_unguarded). The run prints them; with
// -fail-on-unloadable it fails, after writing its output; -v adds the
// guarded misses.
func TestFailOnUnloadable(t *testing.T) {
	obj := filepath.Join(kerneltest.Dir(), "objects", "guards-el.o")
	for _, tt := range []struct {
		flags   []string
		fails   bool
		guarded bool
	}{
		{nil, false, false},
		{[]string{"-v"}, false, true},
		{[]string{"-fail-on-unloadable"}, true, false},
		{[]string{"-q", "-fail-on-unloadable"}, true, false},
	} {
		out := t.TempDir()
		args := append([]string{
			"-corpus", filepath.Join(kerneltest.Dir(), "btfhub"), "-kernels", "6.12.*", "-pkg", "agent",
			"-output", out + string(filepath.Separator),
		}, tt.flags...)
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, append(args, obj))
		if tt.fails && !errors.Is(err, generator.ErrUnloadable) || !tt.fails && err != nil {
			t.Errorf("%v: error %v, want ErrUnloadable: %v", tt.flags, err, tt.fails)
		}
		if _, err := os.Stat(filepath.Join(out, "kernelbtf.go")); err != nil {
			t.Errorf("%v: %v", tt.flags, err)
		}
		table := stdout.String()
		if slices.Contains(tt.flags, "-q") {
			// No report: the error names the programs and says how to see why.
			if table != "" || err == nil || !strings.Contains(err.Error(), "missing_unguarded") || !strings.Contains(err.Error(), "run without -q") {
				t.Errorf("%v: error %v, stdout %q", tt.flags, err, table)
			}
			continue
		}
		if !strings.Contains(table, "missing_unguarded") || strings.Contains(table, "  field_guarded  ") {
			t.Errorf("%v: table:\n%s", tt.flags, table)
		}
		// -v names relocations as the Why section does: program, field path.
		if tt.guarded && !strings.Contains(table, "missing_unguarded: byte_off task_struct___fake.btfembed_missing: poisoned on 1/1 kernels") {
			t.Errorf("%v: the unresolved relocations are not named by program and field:\n%s", tt.flags, table)
		}
		if got := strings.Contains(table, "Guarded misses"); got != tt.guarded {
			t.Errorf("%v: guarded misses listed: %v, want %v", tt.flags, got, tt.guarded)
		}
	}
}

package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProgress: both forms count kernels, a skipped entry taken off the
// total, print failures, and give the rate in kernels/s only; the bar is
// gone once stopped.
func TestProgress(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		var out lockedBuffer
		p := newProgress(&out, terminal, 0, func() int { return 80 })
		p.Total(4)
		p.Done("x86_64/a (debian 12)", nil)
		p.Skipped("/corpus/b.btf.tar.xz", errors.New("truncated"))
		p.Done("x86_64/c (debian 12)", errors.New("verification failed"))
		if terminal {
			out.waitFor(t, "2/3 kernels")
		}
		p.Done("x86_64/d (debian 12)", nil)
		p.stop()
		got := out.String()
		want := []string{"skipped /corpus/b.btf.tar.xz: truncated", "x86_64/c (debian 12): verification failed", " kernels/s"}
		if terminal {
			// The line drawn under the skipped entry counts it out.
			if _, after, _ := strings.Cut(got, "truncated\n"); !strings.Contains(strings.SplitN(after, "\n", 2)[0], "1/3 kernels") {
				t.Errorf("terminal: the line under the skipped entry does not say 1/3 kernels:\n%q", got)
			}
			want = append(want, "2/3 kernels")
			// Cleared: the cursor goes up a line and erases to the end.
			if !strings.HasSuffix(got, "\x1b[1A\x1b[J") {
				t.Errorf("terminal: the bar is not cleared at the end:\n%q", got)
			}
		} else {
			want = append(want, "1/4 kernels", "3/3 kernels", "left")
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("terminal %v: output lacks %q:\n%q", terminal, w, got)
			}
		}
		if units := regexp.MustCompile(`kernels/(min|hr)|it/s`).FindString(got); units != "" {
			t.Errorf("terminal %v: rate given as %s:\n%q", terminal, units, got)
		}
	}
}

// TestProgressStopEarly: a run that ends before its total (an error, an
// interrupt) takes the bar off the terminal all the same, and stop
// returns.
func TestProgressStopEarly(t *testing.T) {
	var out lockedBuffer
	p := newProgress(&out, true, 0, func() int { return 80 })
	p.Total(4)
	p.Done("x86_64/a (debian 12)", nil)
	out.waitFor(t, "1/4 kernels")
	p.Done("x86_64/b (debian 12)", errors.New("verification failed"))
	p.stop()
	got := out.String()
	// The failure is printed above the bar, at the start of a line.
	if !strings.Contains(got, "\x1b[J"+"btfembed: x86_64/b (debian 12): verification failed\n") {
		t.Errorf("the failure is not printed in place of the bar:\n%q", got)
	}
	if !strings.HasSuffix(got, "\x1b[1A\x1b[J") {
		t.Errorf("the bar is not cleared at the end:\n%q", got)
	}
}

// lockedBuffer is a bytes.Buffer the bar's goroutine may write while the
// test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the bar has drawn s; it draws every 100 ms.
func (b *lockedBuffer) waitFor(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(b.String(), s); {
		if time.Now().After(deadline) {
			t.Fatalf("the bar never showed %q:\n%q", s, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestImportProgress: an import input's modules are reported at the
// start, when the read ends, at each tenth made and at the end, or at
// every call once the interval has passed, with the input named and the
// time left.
func TestImportProgress(t *testing.T) {
	for _, tt := range []struct {
		interval time.Duration
		lines    int
	}{
		{time.Hour, 12}, // start; read; 10, ..., 100 of 100
		{0, 202},
	} {
		var out bytes.Buffer
		p := newImportProgress(&out, tt.interval)
		const deb = "linux-image-5.10.0-32-amd64-dbg.deb"
		for found := range 101 {
			p.report(deb, 0, found, false)
		}
		for done := range 101 {
			p.report(deb, done, 100, true)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != tt.lines {
			t.Errorf("interval %v: %d lines, want %d:\n%s", tt.interval, len(lines), tt.lines, out.String())
			continue
		}
		for i, want := range map[int]string{
			0:              "btfembed corpus import: linux-image-5.10.0-32-amd64-dbg.deb: reading: 0 modules found, 0 made, 0s",
			len(lines) - 6: "/100 modules, ",
			len(lines) - 1: "btfembed corpus import: linux-image-5.10.0-32-amd64-dbg.deb: 100/100 modules, ",
		} {
			if !strings.HasPrefix(lines[i], want) && !strings.Contains(lines[i], want) {
				t.Errorf("interval %v: line %d is %q, want %q", tt.interval, i, lines[i], want)
			}
		}
		if !strings.Contains(lines[len(lines)-6], "left") {
			t.Errorf("interval %v: %q says no time left", tt.interval, lines[len(lines)-6])
		}
	}
	// A vmlinux without modules: its start, and no "0/0 modules" at the end.
	var out bytes.Buffer
	p := newImportProgress(&out, time.Hour)
	p.report("vmlinux-6.1.176.xz", 0, 0, false)
	p.report("vmlinux-6.1.176.xz", 0, 0, true)
	if want := "btfembed corpus import: vmlinux-6.1.176.xz: reading: 0 modules found, 0 made, 0s\n"; out.String() != want {
		t.Errorf("a vmlinux without modules: %q, want %q", out.String(), want)
	}
}

// TestProgressBarLine: the bar fills with the kernels done, is left out
// where it and the text do not both fit, and the line is cut to the
// terminal's width less one column, so that it never wraps (a wrapped line
// would be erased only in part).
func TestProgressBarLine(t *testing.T) {
	for _, tt := range []struct {
		width, done, total int
		want               string
	}{
		{200, 2, 4, "[============------------] 2/4 kernels, "},
		{200, 0, 0, "0 kernels, "},
		{200, 5, 4, "[========================] 5/4 kernels, "},
		{60, 1, 4, "1/4 kernels, "}, // no room for the bar and the text
		{12, 1, 4, "1/4 kernels"},
	} {
		p := &barProgress{width: func() int { return tt.width }, start: time.Now(), done: tt.done, total: tt.total}
		got := p.line()
		if !strings.HasPrefix(got, tt.want) || len(got) > tt.width-1 {
			t.Errorf("width %d, %d/%d: line %q, want it to start with %q and take under %d columns", tt.width, tt.done, tt.total, got, tt.want, tt.width)
		}
	}
}

package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/safetext"
)

// progress is a generator.Progress that must be stopped once the run is
// over, before anything else is written where it writes.
type progress interface {
	generator.Progress
	// stop takes the bar off the terminal and waits until it is gone.
	stop()
}

// newProgress reports progress on w: a live line (a bar, kernels done,
// rate, ETA) when w is a terminal, whose columns width tells, redrawn
// every 100 ms, with each failure printed above it and the line cleared
// when the run is over; else a plain line every interval and one per
// failure, which reads well in CI logs.
//
// Both count kernels: the total is the corpus entries found, less those
// skipped as unreadable, so the count ends at the number of kernels
// processed. The rate is always in kernels per second; a unit that
// changes with the rate (kernels/hr, then /min, then /s) cannot be
// compared at a glance.
func newProgress(w io.Writer, terminal bool, interval time.Duration, width func() int) progress {
	start := time.Now()
	if terminal {
		return newBarProgress(w, width, 100*time.Millisecond, start)
	}
	return &lineProgress{w: w, total: -1, interval: interval, start: start, last: start}
}

// progressLine says how many kernels are done, of how many when total is
// positive, at what rate, and how long the rest should take.
func progressLine(done, total int, elapsed time.Duration) string {
	if total <= 0 {
		return fmt.Sprintf("%d kernels, %s", done, rate(done, elapsed))
	}
	s := fmt.Sprintf("%d/%d kernels, %s", done, total, rate(done, elapsed))
	if done > 0 {
		eta := time.Duration(float64(total-done) / float64(done) * float64(elapsed))
		s += fmt.Sprintf(", about %s left", eta.Round(time.Second))
	}
	return s
}

// rate formats kernels per second.
func rate(done int, elapsed time.Duration) string {
	if elapsed <= 0 {
		return "- kernels/s"
	}
	return fmt.Sprintf("%.2f kernels/s", float64(done)/elapsed.Seconds())
}

// barProgress draws one line at the foot of a terminal, from a goroutine
// that redraws it every refresh. The line ends with a newline; a redraw
// moves the cursor up over it and erases to the end of the screen
// (\x1b[1A\x1b[J), writes what goes above it (a failure), and draws it
// again. It is cut to the terminal's width, since a line that wraps would
// take two rows and the redraw would erase only one.
//
// It is written here rather than taken from a library: vbauerster/mpb,
// used before, brought five more modules (terminal widths of Unicode text,
// ANSI stripping, moving averages) into every module that pins btfembed
// with a tool directive, and held x/sys and x/term to the versions it
// allowed, for one line of ASCII.
type barProgress struct {
	w     io.Writer
	width func() int
	start time.Time
	quit  chan struct{}
	ended chan struct{} // closed when the drawing goroutine returns

	mu             sync.Mutex
	done, total    int
	drawn, stopped bool
}

func newBarProgress(w io.Writer, width func() int, refresh time.Duration, start time.Time) *barProgress {
	p := &barProgress{w: w, width: width, start: start, quit: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(p.ended)
		t := time.NewTicker(refresh)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.mu.Lock()
				p.redraw("")
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// redraw, with p.mu held, writes above (complete lines, or "") in place
// of the line and draws the line under it; once stopped, only above.
func (p *barProgress) redraw(above string) {
	var b strings.Builder
	if p.drawn {
		b.WriteString("\x1b[1A\x1b[J")
	}
	b.WriteString(above)
	if !p.stopped {
		b.WriteString(p.line())
		b.WriteByte('\n')
	}
	p.drawn = !p.stopped
	io.WriteString(p.w, b.String())
}

// line is the bar and progressLine, within the terminal's width less one
// column (a line that fills the last column wraps on some terminals): the
// bar is left out where both do not fit, and the text cut where it alone
// does not.
func (p *barProgress) line() string {
	const cells = 24
	s := progressLine(p.done, p.total, time.Since(p.start))
	w := p.width() - 1
	if p.total > 0 && len(s)+cells+3 <= w {
		n := min(p.done, p.total) * cells / p.total
		s = "[" + strings.Repeat("=", n) + strings.Repeat("-", cells-n) + "] " + s
	}
	if w > 0 && len(s) > w {
		s = s[:w] // ASCII
	}
	return s
}

func (p *barProgress) Total(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = n
}

func (p *barProgress) Done(kernel string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if err != nil {
		p.redraw(fmt.Sprintf("btfembed: %s: %v\n", kernel, err))
	}
}

func (p *barProgress) Skipped(path string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.total > 0 {
		p.total-- // an entry that is no kernel
	}
	p.redraw(fmt.Sprintf("btfembed: skipped %s: %s\n", safetext.Escape(path), safetext.Escape(err.Error())))
}

// stop takes the line off the terminal, whether the run reached its total
// or ended early (an error, an interrupt).
func (p *barProgress) stop() {
	close(p.quit)
	<-p.ended
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.redraw("")
}

type lineProgress struct {
	mu       sync.Mutex
	w        io.Writer
	total    int
	done     int
	interval time.Duration
	start    time.Time
	last     time.Time
}

func (p *lineProgress) Total(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = n
}

func (p *lineProgress) Done(kernel string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if err != nil {
		fmt.Fprintf(p.w, "btfembed: %s: %v\n", kernel, err)
	}
	if now := time.Now(); now.Sub(p.last) >= p.interval {
		p.last = now
		fmt.Fprintf(p.w, "btfembed: %s\n", progressLine(p.done, p.total, now.Sub(p.start)))
	}
}

func (p *lineProgress) Skipped(path string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "btfembed: skipped %s: %s\n", safetext.Escape(path), safetext.Escape(err.Error()))
	if p.total > 0 {
		p.total-- // an entry that is no kernel
	}
}

func (*lineProgress) stop() {}

// importProgress prints how the long part of each import input goes
// (corpus.ImportOptions.Progress: the modules pahole makes BTF of, minutes
// for a debug package), so that a log, where no bar is drawn, shows the
// import alive: a line when an input starts, when its read ends, at each
// tenth of its modules made after that, and when interval has passed
// since the input's last line.
type importProgress struct {
	mu       sync.Mutex
	w        io.Writer
	interval time.Duration
	inputs   map[string]*inputProgress
}

// inputProgress is where one input is.
type inputProgress struct {
	start, last time.Time
	read        bool // its read had ended at the last line
	tenth       int  // tenths made at the last line
}

func newImportProgress(w io.Writer, interval time.Duration) *importProgress {
	return &importProgress{w: w, interval: interval, inputs: map[string]*inputProgress{}}
}

// report is a corpus.ImportOptions.Progress.
func (p *importProgress) report(input string, done, found int, read bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	in := p.inputs[input]
	first := in == nil
	if first {
		in = &inputProgress{start: now}
		p.inputs[input] = in
	}
	tenth := 0
	if read && found > 0 {
		tenth = done * 10 / found
	}
	end := read && done >= found
	if end && found == 0 {
		// A vmlinux without modules (or -no-modules): its lines said it
		// was read; "0/0 modules" would say nothing more.
		delete(p.inputs, input)
		return
	}
	if first || end || read != in.read || tenth > in.tenth || now.Sub(in.last) >= p.interval {
		fmt.Fprintf(p.w, "btfembed corpus import: %s: %s\n", safetext.Escape(input), moduleProgress(done, found, read, now.Sub(in.start)))
		in.read, in.tenth, in.last = read, tenth, now
	}
	if end {
		delete(p.inputs, input)
	}
}

// moduleProgress says how many modules are made, of how many, in how
// long, and how long the rest should take; while the input is still read
// (and modules made as they come), how many are found so far.
func moduleProgress(done, found int, read bool, elapsed time.Duration) string {
	if !read {
		return fmt.Sprintf("reading: %d modules found, %d made, %s", found, done, elapsed.Round(time.Second))
	}
	s := fmt.Sprintf("%d/%d modules, %s", done, found, elapsed.Round(time.Second))
	if done > 0 && done < found {
		eta := time.Duration(float64(found-done) / float64(done) * float64(elapsed))
		s += fmt.Sprintf(", about %s left", eta.Round(time.Second))
	}
	return s
}

package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/btfembed/btfembed/generator"
)

// newProgress reports progress on w: a live bar (kernels done, rate, ETA)
// when w is a terminal, else a plain line every interval and one per
// failure, which reads well in CI logs.
func newProgress(w io.Writer, terminal bool, interval time.Duration) generator.Progress {
	if terminal {
		bar := progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("kernels"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("kernels"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
		return &barProgress{bar: bar, w: w}
	}
	return &lineProgress{w: w, total: -1, interval: interval, start: time.Now(), last: time.Now()}
}

type barProgress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	w   io.Writer
}

func (p *barProgress) Total(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.ChangeMax(n)
}

func (p *barProgress) Done(kernel string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.bar.Clear()
		fmt.Fprintf(p.w, "btfembed: %s: %v\n", kernel, err)
	}
	p.bar.Add(1)
}

func (p *barProgress) Skipped(path string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Clear()
	fmt.Fprintf(p.w, "btfembed: skipped %s: %v\n", path, err)
	p.bar.Add(1)
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
		rate := float64(p.done) / now.Sub(p.start).Seconds()
		if p.total > 0 {
			eta := time.Duration(float64(p.total-p.done) / rate * float64(time.Second))
			fmt.Fprintf(p.w, "btfembed: %d/%d kernels, %.1f/s, about %s left\n", p.done, p.total, rate, eta.Round(time.Second))
		} else {
			fmt.Fprintf(p.w, "btfembed: %d kernels, %.1f/s\n", p.done, rate)
		}
	}
}

func (p *lineProgress) Skipped(path string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "btfembed: skipped %s: %v\n", path, err)
}

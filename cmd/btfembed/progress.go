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
//
// Both count kernels: the total is the corpus entries found, less those
// skipped as unreadable, so the count ends at the number of kernels
// processed. The rate is always in kernels per second; a unit that
// changes with the rate (kernels/hr, then /min, then /s, as progressbar's
// own rate does) cannot be compared at a glance.
func newProgress(w io.Writer, terminal bool, interval time.Duration) generator.Progress {
	start := time.Now()
	if terminal {
		bar := progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("kernels"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
		return &barProgress{bar: bar, w: w, start: start}
	}
	return &lineProgress{w: w, total: -1, interval: interval, start: start, last: start}
}

// rate formats kernels per second.
func rate(done int, elapsed time.Duration) string {
	if elapsed <= 0 {
		return "- kernels/s"
	}
	return fmt.Sprintf("%.2f kernels/s", float64(done)/elapsed.Seconds())
}

type barProgress struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	w     io.Writer
	start time.Time
	done  int
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
	p.done++
	p.bar.Describe("kernels, " + rate(p.done, time.Since(p.start)))
	p.bar.Add(1)
}

func (p *barProgress) Skipped(path string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Clear()
	fmt.Fprintf(p.w, "btfembed: skipped %s: %v\n", path, err)
	if max := p.bar.GetMax(); max > 0 {
		p.bar.ChangeMax(max - 1) // an entry that is no kernel
	}
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
		elapsed := now.Sub(p.start)
		if p.total > 0 {
			eta := time.Duration(float64(p.total-p.done) / float64(p.done) * float64(elapsed))
			fmt.Fprintf(p.w, "btfembed: %d/%d kernels, %s, about %s left\n", p.done, p.total, rate(p.done, elapsed), eta.Round(time.Second))
		} else {
			fmt.Fprintf(p.w, "btfembed: %d kernels, %s\n", p.done, rate(p.done, elapsed))
		}
	}
}

func (p *lineProgress) Skipped(path string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "btfembed: skipped %s: %v\n", path, err)
	if p.total > 0 {
		p.total-- // an entry that is no kernel
	}
}

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	btfruntime "github.com/btfembed/btfembed/runtime"
)

// cString is a C string from a char array as bpf2go types it.
func cString(chars []int8) string {
	b := make([]byte, 0, len(chars))
	for _, c := range chars {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// CommString is the task's comm, the first 15 bytes of its executable's
// name.
func (e *bpfEvent) CommString() string { return cString(e.Comm[:]) }

// FilenameString is the path that was executed.
func (e *bpfEvent) FilenameString() string { return cString(e.Filename[:]) }

var errClosed = errors.New("tracer closed")

// tracer is the loaded and attached execsnoop program.
type tracer struct {
	Selection *btfruntime.Selection
	// Skipped says why the optional count_exec is not running, "" if it
	// is.
	Skipped   string
	objs      bpfObjects
	links     []link.Link
	events    *ringbuf.Reader
	closeOnce sync.Once
}

// newTracer loads execsnoop (bpf2go's object for this GOARCH) with the BTF
// the assets select for this kernel and attaches it to
// sched:sched_process_exec. A program btfembed predicts will not load on
// this kernel is left out, and the rest runs: here the optional
// count_exec on kernels before 6.2.
func newTracer(assets *btfruntime.Assets, opts *btfruntime.SelectOptions) (_ *tracer, err error) {
	collOpts, sel, err := assets.CollectionOptions(opts)
	if err != nil {
		return nil, err
	}
	t := &tracer{Selection: sel}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if err := t.load(collOpts); err != nil {
		return nil, fmt.Errorf("load execsnoop: %w", err)
	}
	for _, p := range []*ebpf.Program{t.objs.HandleExec, t.objs.CountExec} {
		if p == nil {
			continue // skipped on this kernel
		}
		l, err := link.Tracepoint("sched", "sched_process_exec", p, nil)
		if err != nil {
			return nil, fmt.Errorf("attach %s to sched:sched_process_exec: %w", p, err)
		}
		t.links = append(t.links, l)
	}
	if t.events, err = ringbuf.NewReader(t.objs.Events); err != nil {
		return nil, fmt.Errorf("open ring buffer: %w", err)
	}
	return t, nil
}

// load loads every program the prediction for this kernel keeps. Where
// there is no prediction (a kernel whose release is not embedded, with
// BTF of its own or from a user's file), it tries everything, then, if
// that fails, everything but the optional count_exec.
func (t *tracer) load(opts *ebpf.CollectionOptions) error {
	spec, err := loadBpf()
	if err != nil {
		return err
	}
	skipped, err := t.Selection.LoadAndAssign(spec, &t.objs, opts, nil)
	if err != nil && !t.Selection.Predicted {
		without, err2 := loadBpf()
		if err2 != nil {
			return err2
		}
		delete(without.Programs, bpfProgCountExec)
		delete(without.Maps, bpfMapExecsPerCgroup)
		if _, err2 := t.Selection.LoadAndAssign(without, &t.objs, opts, nil); err2 == nil {
			t.Skipped = fmt.Sprintf("%s: no prediction for this kernel, and loading it failed: %v", bpfProgCountExec, err)
			return nil
		}
	}
	if err != nil {
		return err
	}
	for _, p := range skipped {
		if t.Skipped != "" {
			t.Skipped += "; "
		}
		t.Skipped += p.String()
	}
	return nil
}

// ExecsInCgroup is how many execs count_exec has seen in the cgroup v2
// whose directory is dir; ok is false where count_exec is not running.
func (t *tracer) ExecsInCgroup(dir string) (n uint64, ok bool, err error) {
	if t.objs.ExecsPerCgroup == nil {
		return 0, false, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return 0, true, err
	}
	defer f.Close()
	if err := t.objs.ExecsPerCgroup.Lookup(int32(f.Fd()), &n); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return 0, true, fmt.Errorf("look up cgroup %s: %w", dir, err)
	}
	return n, true, nil
}

// Next waits for the next exec event.
func (t *tracer) Next() (*bpfEvent, error) {
	rec, err := t.events.Read()
	if errors.Is(err, ringbuf.ErrClosed) {
		return nil, errClosed
	}
	if err != nil {
		return nil, err
	}
	var ev bpfEvent
	if err := binary.Read(bytes.NewReader(rec.RawSample), binary.LittleEndian, &ev); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	return &ev, nil
}

// SetDeadline bounds how long Next waits; past it, Next returns an error
// wrapping os.ErrDeadlineExceeded.
func (t *tracer) SetDeadline(d time.Time) { t.events.SetDeadline(d) }

// Close detaches and unloads the program; it is safe to call more than
// once.
func (t *tracer) Close() {
	t.closeOnce.Do(func() {
		if t.events != nil {
			t.events.Close()
		}
		for _, l := range t.links {
			l.Close()
		}
		t.objs.Close()
	})
}

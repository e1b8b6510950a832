package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

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
	objs      bpfObjects
	link      link.Link
	events    *ringbuf.Reader
	closeOnce sync.Once
}

// newTracer loads execsnoop (bpf2go's object for this GOARCH) with the BTF
// the assets select for this kernel and attaches it to
// sched:sched_process_exec.
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
	if err := loadBpfObjects(&t.objs, collOpts); err != nil {
		return nil, fmt.Errorf("load execsnoop: %w", err)
	}
	if t.link, err = link.Tracepoint("sched", "sched_process_exec", t.objs.HandleExec, nil); err != nil {
		return nil, fmt.Errorf("attach to sched:sched_process_exec: %w", err)
	}
	if t.events, err = ringbuf.NewReader(t.objs.Events); err != nil {
		return nil, fmt.Errorf("open ring buffer: %w", err)
	}
	return t, nil
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
		if t.link != nil {
			t.link.Close()
		}
		t.objs.Close()
	})
}

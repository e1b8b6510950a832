package main

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	btfruntime "github.com/btfembed/btfembed/runtime"
)

//go:embed bpf/execsnoop_bpfel.o
var execsnoopObject []byte

// event mirrors struct event in bpf/execsnoop.c.
type event struct {
	Pid      uint32 // thread group id of the process that exec'd
	Tid      uint32
	Ppid     uint32 // thread group id of its real parent
	Uid      uint32
	Comm     [16]byte
	Filename [256]byte
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// CommString is the task's comm, the first 15 bytes of its executable's
// name.
func (e *event) CommString() string { return cString(e.Comm[:]) }

// FilenameString is the path that was executed.
func (e *event) FilenameString() string { return cString(e.Filename[:]) }

var errClosed = errors.New("tracer closed")

// tracer is the loaded and attached execsnoop program.
type tracer struct {
	Selection *btfruntime.Selection
	coll      *ebpf.Collection
	link      link.Link
	events    *ringbuf.Reader
	closeOnce sync.Once
}

// newTracer loads execsnoop with the BTF the assets select for this
// kernel and attaches it to sched:sched_process_exec.
func newTracer(assets *btfruntime.Assets, opts *btfruntime.SelectOptions) (_ *tracer, err error) {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(execsnoopObject))
	if err != nil {
		return nil, fmt.Errorf("execsnoop object: %w", err)
	}
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
	if t.coll, err = ebpf.NewCollectionWithOptions(spec, *collOpts); err != nil {
		return nil, fmt.Errorf("load execsnoop: %w", err)
	}
	if t.link, err = link.Tracepoint("sched", "sched_process_exec", t.coll.Programs["handle_exec"], nil); err != nil {
		return nil, fmt.Errorf("attach to sched:sched_process_exec: %w", err)
	}
	if t.events, err = ringbuf.NewReader(t.coll.Maps["events"]); err != nil {
		return nil, fmt.Errorf("open ring buffer: %w", err)
	}
	return t, nil
}

// Next waits for the next exec event.
func (t *tracer) Next() (*event, error) {
	rec, err := t.events.Read()
	if errors.Is(err, ringbuf.ErrClosed) {
		return nil, errClosed
	}
	if err != nil {
		return nil, err
	}
	var ev event
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
		if t.coll != nil {
			t.coll.Close()
		}
	})
}

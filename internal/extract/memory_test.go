package extract

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReadCapped(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       io.Reader
		limit   int64
		wantLen int
		wantErr error
	}{
		{"empty", bytes.NewReader(nil), 10, 0, nil},
		{"small", bytes.NewReader([]byte("abc")), 10, 3, nil},
		{"several chunks", bytes.NewReader(make([]byte, 2*chunkSize+5)), 3 * chunkSize, 2*chunkSize + 5, nil},
		{"exactly the limit", bytes.NewReader(make([]byte, chunkSize)), chunkSize, chunkSize, nil},
		{"past the limit", bytes.NewReader(make([]byte, chunkSize+1)), chunkSize, 0, ErrTooLarge},
		// A decoder's own io.ErrUnexpectedEOF is a truncated stream, not an end.
		{"truncated stream", io.MultiReader(bytes.NewReader([]byte("ab")), errReader{io.ErrUnexpectedEOF}), 10, 0, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			free := sharedBudget.free
			b, release, err := readCapped(tc.r, tc.limit)
			if !errors.Is(err, tc.wantErr) || tc.wantErr == nil && err != nil {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if err == nil {
				if len(b) != tc.wantLen {
					t.Errorf("read %d bytes, want %d", len(b), tc.wantLen)
				}
				if used := free - sharedBudget.free; used != int64(tc.wantLen) {
					t.Errorf("%d bytes charged to the budget, want %d", used, tc.wantLen)
				}
				release()
			}
			if sharedBudget.free != free {
				t.Errorf("budget has %d bytes free after release, want %d", sharedBudget.free, free)
			}
		})
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestBudgetDeadlock: two readers each holding half the budget and asking
// for more can never both go on; the second to ask fails, and the first
// then gets its bytes.
func TestBudgetDeadlock(t *testing.T) {
	b := newBudget(100)
	l1, l2 := b.lease(), b.lease()
	if err := l1.acquire(50); err != nil {
		t.Fatal(err)
	}
	if err := l2.acquire(50); err != nil {
		t.Fatal(err)
	}
	got := make(chan error)
	go func() { got <- l1.acquire(10) }()
	select {
	case err := <-got:
		t.Fatalf("first reader did not wait: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := l2.acquire(10); !errors.Is(err, ErrMemoryBudget) {
		t.Fatalf("second reader: %v, want ErrMemoryBudget", err)
	}
	l2.close()
	if err := <-got; err != nil {
		t.Fatalf("first reader after the second gave up: %v", err)
	}
	l1.close()
	if b.free != 100 || b.holders != 0 {
		t.Errorf("budget left with %d free and %d holders", b.free, b.holders)
	}
}

// TestBudgetStall: two decoders each holding memory and a small input
// (a second lease, which waits outside the budget as its decoder does)
// and asking for more wait for each other, which the holder count cannot
// see; with no byte taken or given back for stallAfter, they fail
// instead of waiting for ever (issue 33). A Reserve lease (pahole, which
// ends on its own) keeps them waiting.
func TestBudgetStall(t *testing.T) {
	defer func(d time.Duration) { stallAfter = d }(stallAfter)
	stallAfter = 200 * time.Millisecond
	for _, pahole := range []bool{false, true} {
		b := newBudget(100)
		decoders := []*lease{b.lease(), b.lease()}
		for _, l := range decoders {
			input := b.lease()
			if err := input.acquire(5); err != nil {
				t.Fatal(err)
			}
			defer input.close()
			if err := l.acquire(40); err != nil {
				t.Fatal(err)
			}
		}
		ext := b.lease()
		ext.external = true
		if pahole {
			if err := ext.acquire(1); err != nil {
				t.Fatal(err)
			}
		}
		got := make(chan error, 2)
		for _, l := range decoders {
			go func() { got <- l.acquire(20) }()
		}
		select {
		case err := <-got:
			switch {
			case pahole:
				t.Fatalf("with pahole running: %v, want a wait", err)
			case !errors.Is(err, ErrMemoryBudget) || !strings.Contains(err.Error(), "no reader took or gave back memory"):
				t.Fatalf("stalled decoder: %v, want ErrMemoryBudget for the stall", err)
			}
		case <-time.After(10 * stallAfter):
			if !pahole {
				t.Fatal("stalled decoders still wait")
			}
			ext.close() // pahole ends: its byte is not enough, and they stall
			if err := <-got; !errors.Is(err, ErrMemoryBudget) {
				t.Fatalf("after pahole: %v", err)
			}
		}
		for _, l := range decoders {
			l.close()
		}
	}
}

// TestBudgetWaits: a reader holding nothing waits for a holder to release
// rather than fail.
func TestBudgetWaits(t *testing.T) {
	b := newBudget(100)
	l1, l2 := b.lease(), b.lease()
	if err := l1.acquire(100); err != nil {
		t.Fatal(err)
	}
	got := make(chan error)
	go func() { got <- l2.acquire(60) }()
	time.Sleep(20 * time.Millisecond)
	l1.close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := b.lease().acquire(101); !errors.Is(err, ErrMemoryBudget) {
		t.Errorf("asking for more than the budget: %v, want ErrMemoryBudget", err)
	}
}

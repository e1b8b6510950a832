package payload

import (
	"errors"
	"fmt"
	"sync"
)

// DefaultBudget is the memory an opened payload may take when the caller
// sets no budget: what its decoded index, its verdicts and the kernels it
// has loaded hold, plus what the call in progress holds for a moment. An
// embedded entry's minimized BTF (a few KB to a few hundred) costs a few
// times its size once cilium/ebpf has decoded it (TestCostModel), and a
// 1,000-kernel index a few hundred KB.
//
// The budget counts memory, not input bytes: a decoded record is 8 to 70
// times larger than its bytes in the payload (an EntryModule takes 280
// bytes for as few as 4 on the wire), and a BTF type cilium/ebpf decodes
// 100 to 250 bytes for 12 to 40 on the wire, far more where many members
// name one long string (each name is copied; btfcheck.go). Issue 18
// (modules naming one huge blob) and issue 33 (a 59,596-byte payload
// whose index decoded to 1,340 MiB) were both budgets of input bytes
// that memory outgrew.
const DefaultBudget = 32 << 20

// ErrOverBudget is wrapped, with ErrCorrupt, by the error of a charge the
// budget cannot take. No payload the generator writes needs more than the
// default; a caller holding several kernels can let go of some and try
// again.
var ErrOverBudget = errors.New("decode budget exceeded")

// Budget is the memory one opened payload may hold, decoded, across all
// calls: the runtime opens each payload with one. A decoder charges it
// before it allocates, with what its result will really occupy (records
// counted times their size in memory, copies of strings, cilium/ebpf's
// decoded types), and gives back what it drops. What a payload caches
// (index blocks, dictionaries, verdicts) stays charged while the
// payload lives. A nil *Budget has no limit. It is safe for concurrent
// use.
type Budget struct {
	limit uint64
	mu    sync.Mutex
	used  uint64
}

// NewBudget returns a budget of limit bytes; limit <= 0 means
// DefaultBudget.
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		limit = DefaultBudget
	}
	return &Budget{limit: uint64(limit)}
}

// Charge takes n bytes for what, or fails with an error wrapping
// ErrCorrupt and ErrOverBudget and takes nothing.
func (b *Budget) Charge(n uint64, what string) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.limit-b.used {
		return fmt.Errorf("%w: %s: %d more bytes exceed the decode budget of %d bytes (%d in use): %w",
			ErrCorrupt, what, n, b.limit, b.used, ErrOverBudget)
	}
	b.used += n
	return nil
}

// Release gives back n bytes an earlier Charge took.
func (b *Budget) Release(n uint64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.used {
		panic(fmt.Sprintf("payload: budget released %d bytes, %d charged", n, b.used))
	}
	b.used -= n
}

// Used is how many bytes are charged now.
func (b *Budget) Used() uint64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

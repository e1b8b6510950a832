package payload

import (
	"fmt"
	"sync/atomic"
)

// DefaultBudget is how many bytes one runtime call (a Select, Lookup or
// Kernels) may decode when the caller sets no budget: five times the
// largest full vmlinux BTF shipped today (Debian 6.12 amd64, 6 MiB),
// where an embedded entry's minimized BTF is typically under 1 MiB.
//
// A per-blob cap alone does not bound a call: many modules can name one
// blob, and each use decodes and parses it again (issue 18: eight modules
// pointing at one 200 MiB blob made a 6,987-byte payload take 2.8 GB).
const DefaultBudget = 32 << 20

// Budget is what one call may still decode. Every decompressed block and
// dictionary and every use of a blob, shared or not, is charged before the
// memory is allocated: a blob's use costs its raw length (the BTF the
// parser holds, string table included) plus, when it is decompressed
// afresh, its stored form. Blocks and dictionaries decoded by an earlier
// call are not charged again. A nil *Budget has no limit.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes; limit <= 0 means
// DefaultBudget.
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		limit = DefaultBudget
	}
	return &Budget{limit: limit}
}

// Charge takes n bytes for what from the budget, or fails with an error
// wrapping ErrCorrupt: no payload the generator writes needs more.
func (b *Budget) Charge(n uint64, what string) error {
	if b == nil {
		return nil
	}
	used := b.used.Add(int64(min(n, uint64(b.limit)+1)))
	if used > b.limit {
		return fmt.Errorf("%w: %s: decoding %d more bytes exceeds the decode budget of %d bytes for one call", ErrCorrupt, what, n, b.limit)
	}
	return nil
}

package extract

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/btfembed/btfembed/internal/regfile"
)

// Caps on what one untrusted input can make this package hold. They come
// from what real kernels need, with headroom; docs/threat-model.md lists
// them.
const (
	// MaxBTF bounds one BTF blob: a vmlinux's or a module's .BTF, a raw
	// BTF file, a BTFHub archive's member. The largest vmlinux BTF today
	// is under 16 MiB (Debian 6.12 amd64: 6 MiB).
	MaxBTF = 64 << 20
	// MaxImage bounds one decompressed stream: a kernel image's payload
	// (under 256 MiB for every distribution kernel, vmlinux with BTF but
	// without DWARF), a compressed module or BTF file, a package member.
	MaxImage = 384 << 20
	// maxWindow bounds the dictionary or window a compressed stream may
	// ask the decoder to allocate (xz, lzma, zstd). Kernel builds ask for
	// at most 64 MiB (lzma -9); zstd -22 asks for 128 MiB only for inputs
	// that large.
	maxWindow = 128 << 20
	// memoryBudget bounds the bytes that all decompressions and package
	// members in progress hold together, however many workers read in
	// parallel: two kernel images at their cap fit, so does one image
	// while it is copied into one piece.
	memoryBudget = 2 * MaxImage
	// chunkSize is the unit in which decompressed bytes are collected
	// and charged to the budget; a stream's first chunks are smaller
	// (firstChunk, growing fourfold), so a small module costs little.
	chunkSize  = 4 << 20
	firstChunk = 64 << 10
)

// ErrTooLarge is wrapped by the errors for an input that decompresses, or
// claims to decompress, past one of the caps above.
var ErrTooLarge = regfile.ErrTooLarge

// ErrMemoryBudget is wrapped when the inputs read in parallel together
// need more than the shared memory budget: every reader holding memory is
// waiting for more. Fewer workers, or reading that input alone, helps.
var ErrMemoryBudget = errors.New("memory budget for parallel reads exhausted")

// budget is a counting semaphore of bytes shared by every reader of the
// package. A reader that needs more than is free waits while another
// reader holding memory can still make progress; if every holder waits,
// no release can come, and the reader asking fails with ErrMemoryBudget
// (releasing what it holds, so the others go on).
//
// A holder can also wait outside the budget: a package reader keeps its
// member while it waits for a decoding slot, and each decoder keeps its
// compressed input while it asks for more. Those waits the count above
// cannot see, so a waiter also fails when no lease has taken or given
// back a byte for stallAfter while it waited, and no pahole run
// (Reserve, whose process ends within its own limits) holds memory: two
// decoders each waiting for room to copy a 380 MiB module into one piece
// waited for ever (issue 33).
type budget struct {
	mu      sync.Mutex
	cond    *sync.Cond
	total   int64
	free    int64
	holders int // leases holding bytes
	waiting int // of which waiting for more since the last release
	// moves counts acquires and releases, for the stall check;
	// external counts the Reserve leases holding bytes.
	moves    uint64
	external int
	resets   uint64 // releases, which reset waiting
}

// stallAfter is how long a waiter waits with no byte taken or given back
// anywhere before it fails. Decoders take a chunk every fraction of a
// second (4 MiB at tens of MB/s), so only a deadlock is that still.
var stallAfter = 10 * time.Second

var sharedBudget = newBudget(memoryBudget)

func newBudget(n int64) *budget {
	b := &budget{total: n, free: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// lease is one reader's share of a budget.
type lease struct {
	b    *budget
	held int64
	// external: a Reserve lease, held for a pahole run.
	external bool
}

func (b *budget) lease() *lease { return &lease{b: b} }

// acquire charges n more bytes to the lease, waiting for them if needed.
func (l *lease) acquire(n int64) error {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.held+n > b.total {
		return fmt.Errorf("%w (%d MiB)", ErrMemoryBudget, b.total>>20)
	}
	counted, resets := false, uint64(0) // whether waiting counts this lease, since which release
	for b.free < n {
		// Only a reader holding memory can release some. This one waits
		// while another holder is not waiting; if it holds nothing it
		// waits while anyone holds memory.
		stuck := b.holders == 0
		if l.held > 0 {
			stuck = b.holders-b.waiting-1 <= 0
		}
		if stuck {
			return fmt.Errorf("%w (%d MiB)", ErrMemoryBudget, b.total>>20)
		}
		if l.held > 0 && (!counted || resets != b.resets) {
			b.waiting++ // release resets it: every waiter rechecks
			counted, resets = true, b.resets
		}
		moves, start := b.moves, time.Now()
		wake := time.AfterFunc(stallAfter, func() {
			b.mu.Lock()
			b.cond.Broadcast()
			b.mu.Unlock()
		})
		b.cond.Wait()
		wake.Stop()
		if b.moves == moves && b.external == 0 && time.Since(start) >= stallAfter {
			return fmt.Errorf("%w (%d MiB): no reader took or gave back memory for %v", ErrMemoryBudget, b.total>>20, stallAfter)
		}
	}
	if l.held == 0 && n > 0 {
		b.holders++
		if l.external {
			b.external++
		}
	}
	b.free -= n
	l.held += n
	b.moves++
	return nil
}

// release gives back n bytes of the lease.
func (l *lease) release(n int64) {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, l.held)
	l.held -= n
	b.free += n
	b.moves++
	if l.held == 0 && n > 0 {
		b.holders--
		if l.external {
			b.external--
		}
	}
	b.waiting = 0
	b.resets++
	b.cond.Broadcast()
}

// close gives back everything the lease holds.
func (l *lease) close() { l.release(l.held) }

// freeChunks holds full-size chunks no reader uses, for the next: a bomb
// that fails leaves reusable chunks rather than garbage that the next
// readers' fresh allocations would pile onto before a collection. A pool,
// so that a run done with big inputs does not keep their chunks.
var freeChunks = sync.Pool{New: func() any { return new([chunkSize]byte) }}

// getChunk returns a chunk of size bytes: a pooled one for chunkSize, a
// new one otherwise.
func getChunk(size int64) []byte {
	if size == chunkSize {
		return freeChunks.Get().(*[chunkSize]byte)[:]
	}
	return make([]byte, size)
}

// putChunk keeps a full-size chunk for the next reader; smaller ones are
// left to the collector.
func putChunk(c []byte) {
	if len(c) == chunkSize {
		freeChunks.Put((*[chunkSize]byte)(c))
	}
}

// fill reads into p until it is full or r fails; unlike io.ReadFull it
// passes on r's own io.ErrUnexpectedEOF (a truncated stream) as an error
// and returns io.EOF, with the bytes read, at the end of r.
func fill(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ReadAllLimit reads r to its end, at most limit bytes, for data that
// outlives the reading (a BTF blob): it grows with what r yields.
func ReadAllLimit(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("more than %d MiB: %w", limit>>20, ErrTooLarge)
	}
	return b, nil
}

// readCapped reads r to its end into one slice of at most limit bytes,
// charging what it holds to the shared budget, and returns the slice with
// a function that gives its bytes back to the budget once the caller is
// done with it. Memory grows with what r really yields, never with a size
// the input claims; more than limit bytes is an error wrapping
// ErrTooLarge, after holding at most limit bytes.
func readCapped(r io.Reader, limit int64) (data []byte, release func(), err error) {
	l := sharedBudget.lease()
	var (
		chunks [][]byte
		total  int64
	)
	// Chunks go back to the free list before their budget is released,
	// so no reader makes a new chunk while a free one is on its way.
	putChunks := func() {
		for _, c := range chunks {
			putChunk(c[:cap(c)])
		}
		chunks = nil
	}
	defer func() {
		if err != nil {
			putChunks()
			l.close()
		}
	}()
	size := int64(firstChunk)
	for {
		if err := l.acquire(size); err != nil {
			return nil, nil, err
		}
		c := getChunk(size)
		size = min(4*size, chunkSize)
		n, err := fill(r, c)
		total += int64(n)
		chunks = append(chunks, c[:n])
		if total > limit {
			return nil, nil, fmt.Errorf("more than %d MiB: %w", limit>>20, ErrTooLarge)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
	}
	// One piece for the caller, charged until it releases it.
	if len(chunks) > 1 {
		if err := l.acquire(total); err != nil {
			return nil, nil, err
		}
	}
	data = make([]byte, 0, total)
	var n int64 // the chunks' charge
	for _, c := range chunks {
		data = append(data, c...)
		n += int64(cap(c))
	}
	if len(chunks) == 1 {
		n -= total // the chunk's charge now stands for data
	}
	putChunks()
	l.release(n)
	return data, l.close, nil
}

// Reserve charges n bytes of memory that something outside this process's
// heap uses on the import's behalf (a pahole run, internal/pahole) to the
// shared budget, waiting while readers or other reservations hold it, and
// returns the function that gives them back. n above the budget is cut to
// the whole budget: such a run goes alone.
func Reserve(n int64) (release func(), err error) {
	l := sharedBudget.lease()
	l.external = true
	if err := l.acquire(min(max(n, 0), sharedBudget.total)); err != nil {
		return nil, err
	}
	return l.close, nil
}

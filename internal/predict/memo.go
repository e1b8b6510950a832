package predict

import (
	"fmt"
	"slices"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// Memo keeps one object's predictions across the kernels of a run. A
// program's prediction depends on its fixups, the kernel's facts
// (Options.Kernel) and the kernel's version, nothing else of the kernel:
// kernels of one series, and a corpus's copies of one build, give a
// program the same fixups and facts, and walking it again would give the
// same verdict. On the big test object, whose 360 programs are walked per
// kernel, that walk was a quarter of a cold generate's CPU. A Memo is
// safe for concurrent use.
type Memo struct {
	mu   sync.Mutex
	seen map[memoKey][]memoEntry
}

type memoKey struct{ program, kernel string }

type memoEntry struct {
	fixups []btf.COREFixup
	p      Prediction
}

// NewMemo returns an empty Memo, for one object.
func NewMemo() *Memo { return &Memo{seen: map[memoKey][]memoEntry{}} }

// memoKernel is what of the kernel a prediction depends on besides the
// fixups; "" when the options do not allow a memo: without given fixups
// (Options.Fixups), or with kernel type IDs replaced per kernel
// (Options.KernelTypeIDs).
func memoKernel(opts *Options) string {
	if opts.Memo == nil || opts.Fixups == nil || opts.KernelTypeIDs != nil {
		return ""
	}
	release := "release " + opts.Release // words a reason may quote
	if v, ok := version(opts.Release); ok {
		release = fmt.Sprintf("version %d", v)
	}
	if opts.Kernel == nil {
		return release
	}
	return release + " " + opts.Kernel.spell()
}

func (m *Memo) get(program, kernel string, fixups []btf.COREFixup) (Prediction, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.seen[memoKey{program, kernel}] {
		if slices.Equal(e.fixups, fixups) {
			return e.p, true
		}
	}
	return Prediction{}, false
}

// put keeps a copy of fixups: Collection reuses its slice.
func (m *Memo) put(program, kernel string, fixups []btf.COREFixup, p Prediction) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memoKey{program, kernel}
	m.seen[k] = append(m.seen[k], memoEntry{slices.Clone(fixups), p})
}

package btfload

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/regfile"
)

// ErrNotWhole says File could not have cilium/ebpf read the file into
// one buffer of its own: the file does not start like raw BTF, or
// cilium/ebpf's loader read it in pieces (a blob of 10 MiB or more, which
// debug/elf reads in chunks).
var ErrNotWhole = errors.New("not read whole by cilium/ebpf")

// chunked is the size from which debug/elf's Section.Data reads a section
// in chunks (internal/saferio): File does not try those, which it would
// read for nothing. Were the bound lower, File would still see that no
// single read filled the section.
const chunked = 10 << 20

// File loads the raw BTF file at path (at most limit bytes, opened as
// internal/regfile opens it) with cilium/ebpf, and returns the spec, the
// file's bytes and their rawbtf index, for the caller to pass on rather
// than parse the bytes again. The bytes are
// the buffer cilium/ebpf's loader read them into: the wrapper serves the
// .BTF section straight from the file, and the ReadAt that fills the
// whole section in one call shows where it lands. Spec copies bytes
// already in memory; File reads them once, into memory both cilium/ebpf
// and the caller use. That buffer is only ever read: cilium/ebpf's
// decoder shares it and must not modify it, and so must the caller. On a
// 12-kernel generate run that one copy less per kernel was 8 % of the
// CPU and a fifth of the page faults (docs/performance.md).
//
// A blob with a data section of size zero is loaded again the plain way
// (see the package doc), from the same bytes. On any error the caller
// reads the file its own way, which says what is wrong with it; the
// caller checks the bytes as it checks its own read.
func File(path string, limit int64) (*btf.Spec, []byte, *rawbtf.Spec, error) {
	f, fi, err := regfile.Open(path, limit)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	size := fi.Size()
	if size >= chunked {
		return nil, nil, nil, fmt.Errorf("%s: %w: %d MiB", path, ErrNotWhole, size>>20)
	}
	var magic [2]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w: %v", path, ErrNotWhole, err)
	}
	bo, err := rawbtf.MagicOrder(magic[:])
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w: no BTF magic (%v)", path, ErrNotWhole, err)
	}
	w := newWrapper(f, size, bo.(order))
	spec, err := btf.LoadSpecFromReader(w)
	if w.whole == nil {
		return nil, nil, nil, fmt.Errorf("%s: %w (%v)", path, ErrNotWhole, err)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	raw := w.whole
	index, err := rawbtf.Parse(raw, nil)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if emptyDatasec(index) {
		if spec, err = btf.LoadSpecFromReader(bytes.NewReader(raw)); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return spec, raw, index, nil
}

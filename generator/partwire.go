package generator

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/relodigest"
	"github.com/btfembed/btfembed/internal/safetext"
)

// partWire is a part as its file holds it: each distinct blob and row
// list once, the kernels referring to them by number (index + 1, 0 for
// none). Kernels of a series minimize to the same blobs and have the same
// rows, which a part written kernel by kernel repeated: a 100-kernel
// run's whole-run entry took 3.2 MB that way, and a rerun spent half its
// time decoding it and sharing the rows again.
type partWire struct {
	Shard, Shards int
	Objects       []string
	Digests       []objectDigests
	Meta          []byte
	Skipped       []Skipped
	Blobs         [][]byte
	Programs      [][]ProgramReport
	Relocations   [][]RelocationReport
	Kernels       []kernelWire
}

// objectDigests are an object's programs' relocation digests, as a part
// holds them: a list, sorted, since decodedSize measures no map.
type objectDigests struct {
	Object   string
	Programs []payload.ProgramDigest
}

// kernelWire is a partKernel whose blobs and rows are numbers. Its
// entry's load verdicts are not kept: Merge makes them again from the
// report (withVerdicts).
type kernelWire struct {
	Key     kernelkey.Key
	VMLinux int
	Modules []moduleWire
	Report  KernelReport // without its row lists
	Rows    [3]int       // Programs, Unresolved, KernelTypeIDs
}

type moduleWire struct {
	Name        string
	Base, Split int
}

// toWire numbers p's blobs and row lists. Equal lists are the same slice
// after sharer.share, so a list is known by its first element's address.
func (p *part) toWire() *partWire {
	w := &partWire{Shard: p.Shard, Shards: p.Shards, Objects: p.Objects, Meta: p.Meta, Skipped: p.Skipped}
	for _, o := range slices.Sorted(maps.Keys(p.Digests)) {
		d := objectDigests{Object: o}
		for _, prog := range slices.Sorted(maps.Keys(p.Digests[o])) {
			d.Programs = append(d.Programs, payload.ProgramDigest{Name: prog, Digest: p.Digests[o][prog]})
		}
		w.Digests = append(w.Digests, d)
	}
	blobs := map[[sha256.Size]byte]int{}
	blob := func(b []byte) int {
		if b == nil {
			return 0
		}
		sum := sha256.Sum256(b)
		if n, ok := blobs[sum]; ok {
			return n
		}
		w.Blobs = append(w.Blobs, b)
		blobs[sum] = len(w.Blobs)
		return len(w.Blobs)
	}
	progs := map[*ProgramReport]int{}
	relocs := map[*RelocationReport]int{}
	for _, k := range p.Kernels {
		kw := kernelWire{Key: k.Entry.Key, Report: k.Report, VMLinux: blob(k.Entry.VMLinux)}
		kw.Report.Programs, kw.Report.Unresolved, kw.Report.KernelTypeIDs = nil, nil, nil
		kw.Rows[0] = number(progs, &w.Programs, k.Report.Programs)
		kw.Rows[1] = number(relocs, &w.Relocations, k.Report.Unresolved)
		kw.Rows[2] = number(relocs, &w.Relocations, k.Report.KernelTypeIDs)
		for _, m := range k.Entry.Modules {
			kw.Modules = append(kw.Modules, moduleWire{Name: m.Name, Base: blob(m.Base), Split: blob(m.Split)})
		}
		w.Kernels = append(w.Kernels, kw)
	}
	return w
}

// number returns the number of rows in lists, adding it once; 0 for no
// rows (nil and empty lists are the same in the report's JSON).
func number[T any](seen map[*T]int, lists *[][]T, rows []T) int {
	if len(rows) == 0 {
		return 0
	}
	if n, ok := seen[&rows[0]]; ok && len((*lists)[n-1]) == len(rows) {
		return n
	}
	*lists = append(*lists, rows)
	seen[&rows[0]] = len(*lists)
	return len(*lists)
}

// fromWire rebuilds the part, every number checked against its table.
func (w *partWire) fromWire() (*part, error) {
	p := &part{Shard: w.Shard, Shards: w.Shards, Objects: w.Objects, Meta: w.Meta, Skipped: w.Skipped,
		Digests: map[string]map[string]relodigest.Digest{}}
	for _, d := range w.Digests {
		if _, dup := p.Digests[d.Object]; dup {
			return nil, fmt.Errorf("relocation digests of %s twice", safetext.Escape(d.Object))
		}
		progs := map[string]relodigest.Digest{}
		for _, prog := range d.Programs {
			if _, dup := progs[prog.Name]; dup {
				return nil, fmt.Errorf("%s: relocation digest of program %s twice", safetext.Escape(d.Object), safetext.Escape(prog.Name))
			}
			progs[prog.Name] = prog.Digest
		}
		p.Digests[d.Object] = progs
	}
	blob := func(n int) ([]byte, error) {
		if n < 0 || n > len(w.Blobs) {
			return nil, fmt.Errorf("blob %d of %d", n, len(w.Blobs))
		}
		if n == 0 {
			return nil, nil
		}
		return w.Blobs[n-1], nil
	}
	if err := w.countRows(p); err != nil {
		return nil, err
	}
	for _, kw := range w.Kernels {
		k := partKernel{Entry: encode.Entry{Key: kw.Key}, Report: kw.Report}
		var err error
		if k.Entry.VMLinux, err = blob(kw.VMLinux); err != nil {
			return nil, err
		}
		if k.Report.Programs, err = list(w.Programs, kw.Rows[0]); err != nil {
			return nil, err
		}
		if k.Report.Unresolved, err = list(w.Relocations, kw.Rows[1]); err != nil {
			return nil, err
		}
		if k.Report.KernelTypeIDs, err = list(w.Relocations, kw.Rows[2]); err != nil {
			return nil, err
		}
		for _, mw := range kw.Modules {
			m := encode.Module{Name: mw.Name}
			if m.Base, err = blob(mw.Base); err != nil {
				return nil, err
			}
			if m.Split, err = blob(mw.Split); err != nil {
				return nil, err
			}
			k.Entry.Modules = append(k.Entry.Modules, m)
		}
		p.Kernels = append(p.Kernels, k)
	}
	return p, nil
}

// countRows counts the rows of the kernels' lists into p.rows, each list
// once for every kernel that refers to it: what the merged report writes.
// It refuses a kernel with more than maxKernelRows, or a part with more
// than maxRows, before anything is made of them.
func (w *partWire) countRows(p *part) error {
	for _, kw := range w.Kernels {
		programs, err := list(w.Programs, kw.Rows[0])
		if err != nil {
			return err
		}
		n := len(programs)
		for _, num := range kw.Rows[1:] {
			relocs, err := list(w.Relocations, num)
			if err != nil {
				return err
			}
			n += len(relocs)
		}
		if n > maxKernelRows {
			return fmt.Errorf("kernel %s: %d report rows, more than %d", kw.Key, n, maxKernelRows)
		}
		if p.rows += n; p.rows > maxRows {
			return fmt.Errorf("more than %d report rows", maxRows)
		}
	}
	return nil
}

func list[T any](lists [][]T, n int) ([]T, error) {
	if n < 0 || n > len(lists) {
		return nil, fmt.Errorf("row list %d of %d", n, len(lists))
	}
	if n == 0 {
		return nil, nil
	}
	return lists[n-1], nil
}

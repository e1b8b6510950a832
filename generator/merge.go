package generator

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"time"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/relodigest"
)

// shardInfo says which part of the corpus a Result covers.
type shardInfo struct {
	Shard, Shards int
}

// partMagic opens a part file; the number changes with its format.
var partMagic = []byte("btfembed part 3\n")

// part is what one shard's run hands to Merge: every kernel's result
// before encoding, and what the run skipped.
type part struct {
	Shard, Shards int
	Objects       []string
	// Digests are the objects' programs' relocation digests, by object.
	Digests map[string]map[string]relodigest.Digest
	// Meta is the caller's, given to WritePart and returned by Merge.
	Meta    []byte
	Kernels []partKernel
	Skipped []Skipped
	// rows counts the kernels' report rows, each kernel's lists once
	// for it (fromWire).
	rows int
}

type partKernel struct {
	Entry  encode.Entry
	Report KernelReport
}

// WritePart writes the result as a part for Merge: the kernels of its
// shard (Args.Shard) with their minimized BTF and report rows, and meta,
// what the caller needs to write the merged output (the command writes
// its command line there). The format is internal to btfembed and checked
// by a SHA-256 trailer: parts are for the Merge of the same version.
func (r *Result) WritePart(w io.Writer, meta []byte) error {
	p := part{
		Shard: r.shard.Shard, Shards: max(r.shard.Shards, 1),
		Objects: r.Report.Objects, Digests: r.digests, Meta: meta, Skipped: r.Report.Skipped,
	}
	for i, e := range r.entries {
		p.Kernels = append(p.Kernels, partKernel{Entry: e, Report: r.Report.Kernels[i]})
	}
	b, err := p.encode()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// encode is the part file: magic, JSON, SHA-256 trailer. JSON and not
// gob: a part is untrusted input, and gob allocates what a slice's
// length claims before reading it (up to 1 GiB from a few bytes; the
// fuzz target stalled on it), where JSON grows with what it reads.
func (p *part) encode() ([]byte, error) { return p.toWire().encode() }

func (w *partWire) encode() ([]byte, error) {
	var b bytes.Buffer
	b.Write(partMagic)
	if err := json.NewEncoder(&b).Encode(w); err != nil {
		return nil, fmt.Errorf("encode part: %w", err)
	}
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	return b.Bytes(), nil
}

// ErrPart is wrapped by Merge's errors about a part that is damaged or
// does not fit the others.
var ErrPart = errors.New("bad part")

func readPart(name string, data []byte) (*part, error) {
	if other, ok := bytes.CutPrefix(data, []byte("btfembed part ")); ok && !bytes.HasPrefix(data, partMagic) {
		version, _, _ := bytes.Cut(other, []byte("\n"))
		return nil, fmt.Errorf("%w: %s is a part of format %.8q, this btfembed merges format %s: merge with the btfembed that wrote it", ErrPart, name, version, bytes.TrimSpace(partMagic[len("btfembed part "):]))
	}
	if len(data) < len(partMagic)+sha256.Size || !bytes.HasPrefix(data, partMagic) {
		return nil, fmt.Errorf("%w: %s is not a btfembed part", ErrPart, name)
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, fmt.Errorf("%w: %s is damaged (checksum mismatch)", ErrPart, name)
	}
	if err := checkPartSize(body[len(partMagic):]); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPart, name, err)
	}
	var w partWire
	if err := json.Unmarshal(body[len(partMagic):], &w); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPart, name, err)
	}
	p, err := w.fromWire()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPart, name, err)
	}
	return p, nil
}

// Part is one shard's output as Merge reads it.
type Part struct {
	Name string // for errors: the file it was read from
	Data []byte
}

// Merge joins the parts that Generate's shards wrote into the payload and
// report one unsharded run gives, byte for byte. Every shard of the split
// must be there once, and all must have been run on the same objects and
// carry the same meta, which it returns. A part is untrusted input: what
// decoding it would take is bounded before it is decoded (checkPartSize),
// the report rows of its kernels are counted (countRows), and every
// kernel in it is checked (checkPartKernel), with its rows' words
// (vocabulary), before it is embedded.
func Merge(parts []Part) (*Result, []byte, error) {
	start := time.Now()
	if len(parts) == 0 {
		return nil, nil, errors.New("no parts to merge")
	}
	var (
		first   *part
		results []*kernelResult
		skipped []Skipped
		seen    = map[int]string{}
		share   = newSharer(false)
		words   = newVocabulary()
		rows    int
	)
	for _, in := range parts {
		p, err := readPart(in.Name, in.Data)
		if err != nil {
			return nil, nil, err
		}
		if first == nil {
			first = p
		}
		switch {
		case p.Shards != first.Shards:
			return nil, nil, fmt.Errorf("%w: %s is a shard of %d, %s of %d", ErrPart, in.Name, p.Shards, parts[0].Name, first.Shards)
		case !slices.Equal(p.Objects, first.Objects) || !bytes.Equal(p.Meta, first.Meta) || !reflect.DeepEqual(p.Digests, first.Digests):
			return nil, nil, fmt.Errorf("%w: %s was generated with other objects or flags than %s", ErrPart, in.Name, parts[0].Name)
		case p.Shard < 0 || p.Shard >= p.Shards:
			return nil, nil, fmt.Errorf("%w: %s: shard %d of %d", ErrPart, in.Name, p.Shard, p.Shards)
		}
		if prev, dup := seen[p.Shard]; dup {
			return nil, nil, fmt.Errorf("%w: shard %d/%d given twice: %s and %s", ErrPart, p.Shard, p.Shards, prev, in.Name)
		}
		seen[p.Shard] = in.Name
		if rows += p.rows; rows > maxRows {
			return nil, nil, fmt.Errorf("%w: %s: the parts' kernels hold more than %d report rows together (%d with this part)", ErrPart, in.Name, maxRows, rows)
		}
		for _, k := range p.Kernels {
			if err := checkPartKernel(&k); err != nil {
				return nil, nil, fmt.Errorf("%w: %s: %w", ErrPart, in.Name, err)
			}
			if err := words.check(&k.Report); err != nil {
				return nil, nil, fmt.Errorf("%w: %s: %w", ErrPart, in.Name, err)
			}
			kr := &kernelResult{entry: k.Entry, report: k.Report}
			share.share(kr)
			results = append(results, kr)
		}
		skipped = append(skipped, p.Skipped...)
	}
	for i := range first.Shards {
		if _, ok := seen[i]; !ok {
			return nil, nil, fmt.Errorf("%w: shard %d/%d missing", ErrPart, i, first.Shards)
		}
	}
	if len(results) == 0 {
		return nil, nil, fmt.Errorf("%w in any part (%d entries skipped)", errNoKernels, len(skipped))
	}
	if err := checkDigests(first); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrPart, parts[0].Name, err)
	}
	res, err := assemble(first.Objects, first.Digests, results, skipped, nil)
	if err != nil {
		return nil, nil, err
	}
	res.shard = shardInfo{Shards: 1}
	res.Report.Duration = time.Since(start)
	return res, first.Meta, nil
}

package generator

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/relodigest"
)

// Result is the output of Generate.
type Result struct {
	Report *Report
	// Warnings are problems that did not stop the run, one line each
	// (an object without CO-RE relocations).
	Warnings []string

	entries []encode.Entry // sorted by key, as in the payload
	// digests are the relocation digests of every object's programs, by
	// the object as Report.Objects names it: what the payload records it
	// was generated for.
	digests map[string]map[string]relodigest.Digest
	payload []byte // encoded by the first call of Payload
	shard   shardInfo
	kc      *kernelCache // nil without a cache
}

// assemble sorts the kernels' results, refuses a kernel found twice, and
// encodes the payload and the report; Generate and Merge share it, so a
// merge of shards gives the bytes one run gives. digests are the objects'
// programs' relocation digests, by object.
func assemble(objects []string, digests map[string]map[string]relodigest.Digest, results []*kernelResult, skipped []Skipped, kc *kernelCache) (*Result, error) {
	slices.SortFunc(results, func(a, b *kernelResult) int { return a.entry.Key.Compare(b.entry.Key) })
	for i := 1; i < len(results); i++ {
		if results[i].entry.Key == results[i-1].entry.Key {
			return nil, fmt.Errorf("kernel %s found twice: %s and %s",
				results[i].entry.Key, results[i-1].report.Path, results[i].report.Path)
		}
	}
	// Skipped entries come from the corpus stream in an order that
	// depends on which kernels share the run; sorted, they do not.
	slices.SortStableFunc(skipped, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	entries := make([]encode.Entry, len(results))
	report := &Report{Objects: objects, Skipped: skipped}
	for i, r := range results {
		entries[i] = r.entry
		report.Kernels = append(report.Kernels, r.report)
	}
	return newResult(entries, report, digests, kc), nil
}

// newResult is the result of entries, whose payload is not encoded yet,
// and completes the report's families and blob count.
func newResult(entries []encode.Entry, report *Report, digests map[string]map[string]relodigest.Digest, kc *kernelCache) *Result {
	withVerdicts(entries, report)
	report.Families = families(report.Kernels)
	// Keyed by digest, as sharer.blob: a string key would copy every
	// distinct blob.
	blobs := map[[sha256.Size]byte]bool{}
	for _, e := range entries {
		blobs[sha256.Sum256(e.VMLinux)] = true
	}
	report.Blobs = len(blobs)
	return &Result{Report: report, entries: entries, digests: digests, kc: kc}
}

// Payload is the embedded format (package internal/payload) holding every
// kernel's entry, encoded on the first call. The go:generate mode writes
// a payload per architecture instead (ForArch), so Generate leaves
// encoding, and Report.PayloadBytes, to the caller that writes one.
func (r *Result) Payload() ([]byte, error) {
	if r.payload != nil {
		return r.payload, nil
	}
	contents := r.contents()
	if data, ok := r.kc.payload(contents); ok {
		r.payload = data
	} else {
		var b bytes.Buffer
		if err := encode.Write(&b, contents, nil); err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		r.payload = b.Bytes()
		r.kc.storePayload(contents, r.payload)
	}
	return r.payload, nil
}

// ForArch is the part of the result for the kernels of one architecture
// (x86_64, arm64, ... in any spelling of uname -m, GOARCH or a
// distribution): what a binary built for that architecture embeds. With
// no such kernel, its payload holds none, and the runtime then serves
// only kernels with BTF of their own.
func (r *Result) ForArch(arch string) *Result {
	if a, ok := kernelkey.NormalizeArch(arch); ok {
		arch = a
	}
	report := &Report{Duration: r.Report.Duration}
	var entries []encode.Entry
	for i, e := range r.entries {
		if e.Key.Arch != arch {
			continue
		}
		entries = append(entries, e)
		k := r.Report.Kernels[i]
		report.Kernels = append(report.Kernels, k)
		for _, o := range k.Objects {
			if !slices.Contains(report.Objects, o) {
				report.Objects = append(report.Objects, o)
			}
		}
	}
	slices.SortFunc(report.Objects, func(a, b string) int {
		return slices.Index(r.Report.Objects, a) - slices.Index(r.Report.Objects, b)
	})
	return newResult(entries, report, r.digests, r.kc)
}

// contents is what the payload holds: the entries, the objects of the
// report with their programs' relocation digests, named as the verdicts
// name them, and the stable families.
func (r *Result) contents() *encode.Payload {
	p := &encode.Payload{Entries: r.entries}
	names := objectNames(r.Report.Objects)
	for _, o := range r.Report.Objects {
		rec := payload.ObjectRecordDigests{Name: names[o]}
		for _, prog := range slices.Sorted(maps.Keys(r.digests[o])) {
			rec.Programs = append(rec.Programs, payload.ProgramDigest{Name: prog, Digest: r.digests[o][prog]})
		}
		if len(rec.Programs) > 0 { // an object without programs: nothing to check
			p.Objects = append(p.Objects, rec)
		}
	}
	for _, f := range r.Report.Families {
		if f.Stable {
			p.Families = append(p.Families, payload.FamilyRecord{Family: f.family, ABIs: f.abis})
		}
	}
	return p
}

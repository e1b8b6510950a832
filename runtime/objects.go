package runtime

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/relodigest"
	"github.com/btfembed/btfembed/internal/safetext"
)

// ErrOtherObjects is wrapped by the error of Check, Prune and
// LoadAndAssign for a collection the payload was not generated for: its
// programs' CO-RE relocations are not those of any object the generator
// minimized the embedded BTF for. The object was rebuilt (or another one
// is loaded) and go generate was not run again, so the embedded BTF may
// lack what its relocations need, on some kernels only.
var ErrOtherObjects = errors.New("generated for other objects")

// Check returns an error wrapping ErrOtherObjects unless the payload was
// generated for spec's object: some object it records has every program
// of spec (spec may have lost programs already: Prune's, the caller's),
// with CO-RE relocations of the same kinds, access strings and local
// types (package relodigest's digest). The error names the generated Go
// file (OpenOptions.GoFile, which the generated code sets) and says to run
// go generate: "kernelbtf_amd64.go was generated for other objects: run
// go generate (...)".
//
// It checks whatever the selection's source, the kernel's own BTF too: a
// stale payload is then caught on a developer's machine, not on the
// kernels in the field that use it. Prune and LoadAndAssign call it
// first; an agent that loads with ebpf.NewCollectionWithOptions itself
// should call it. A payload that records no objects (one without kernels,
// or written before btfembed recorded them, format 4) checks nothing.
func (s *Selection) Check(spec *ebpf.CollectionSpec) error {
	if s.assets == nil || len(spec.Programs) == 0 {
		return nil
	}
	a := s.assets
	var objects []payload.ObjectRecordDigests
	err := a.retry(func() (err error) {
		objects, err = a.p.Objects(a.bud)
		return err
	})
	if err != nil {
		return fmt.Errorf("objects the payload was generated for: %w", err)
	}
	if len(objects) == 0 {
		return nil
	}
	digests, err := relodigest.Programs(spec)
	if err != nil {
		return fmt.Errorf("CO-RE relocations of the collection: %w", err)
	}
	best, bestMatched := -1, -1
	for i, o := range objects {
		matched := 0
		for name, d := range digests {
			if p, ok := program(o, name); ok && p.Digest == d {
				matched++
			}
		}
		if matched == len(digests) {
			return nil
		}
		if matched > bestMatched {
			best, bestMatched = i, matched
		}
	}
	return fmt.Errorf("%s was %w: run go generate (%s)", a.goFileName(), ErrOtherObjects, differences(objects[best], digests))
}

// program finds the program of an object by name. (sort.Search, as in
// payload.Payload.Find: slices.BinarySearchFunc costs agents 3 KB per
// instantiation.)
func program(o payload.ObjectRecordDigests, name string) (payload.ProgramDigest, bool) {
	i := sort.Search(len(o.Programs), func(i int) bool { return o.Programs[i].Name >= name })
	if i == len(o.Programs) || o.Programs[i].Name != name {
		return payload.ProgramDigest{}, false
	}
	return o.Programs[i], true
}

// differences says how the collection's programs differ from the
// object's that fits them best, the first three.
func differences(o payload.ObjectRecordDigests, digests map[string]relodigest.Digest) string {
	var diffs []string
	names := make([]string, 0, len(digests)) // not slices.Sorted(maps.Keys): as in objectOf
	for name := range digests {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, ok := program(o, name)
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s has no program %s", o.Name, safetext.Escape(name)))
		case p.Digest != digests[name]:
			diffs = append(diffs, fmt.Sprintf("the CO-RE relocations of %s are not those of %s's", safetext.Escape(name), o.Name))
		}
	}
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("%d more", len(diffs)-3))
	}
	return strings.Join(diffs, "; ")
}

// goFileName names the payload in errors: the generated Go file that
// embeds it.
func (a *Assets) goFileName() string {
	if a.goFile == "" {
		return "the payload"
	}
	return safetext.Escape(a.goFile)
}

package btfrelocate

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Options tunes Relocate. The zero value, like a nil pointer, is
// libbpf's strict rules.
type Options struct {
	// LayoutCompatible also accepts a new-base type that differs from the
	// distilled description in ways that cannot move or resize anything in
	// the split's own types: an INT of the same size with another
	// encoding (the signedness of char, which Linux 6.2 changed; a bool),
	// and, for a composite the split only points to, another size or a
	// forward declaration. Types the split embeds must still have their
	// size, and every type must still be found by kind and name.
	LayoutCompatible bool
}

// Relocate rewrites split BTF over a distilled base (distilledBase, as
// Distill or pahole made it) into split BTF over newBase, which is usually
// the vmlinux BTF of the kernel at hand.
//
// Each distilled base type is mapped to the one newBase type of its name
// that matches it, as libbpf's btf__relocate does:
//   - INT: an INT of the same size and encoding;
//   - FLOAT: a FLOAT of the same size;
//   - ENUM and ENUM64: an ENUM or ENUM64 of the same size;
//   - FWD: a FWD of the same flavour, or a STRUCT (UNION) for a struct
//     (union) FWD;
//   - STRUCT and UNION: the same kind, of the same size if the split embeds
//     the type or newBase has several composites of the name.
//
// When some type has no match, or more than one, Relocate returns an
// *UnmappedError listing every such type (libbpf stops at the first). On
// success the split's types keep their order, start after newBase's last
// ID and refer to newBase's types.
func Relocate(split, distilledBase []byte, newBase *Base, opts *Options) ([]byte, error) {
	s, err := ParseOverDistilled(split, distilledBase)
	if err != nil {
		return nil, err
	}
	return RelocateSpec(s, newBase.spec, opts)
}

// RelocateSpec is Relocate on parsed BTF: split over its distilled base
// (split.Base()).
func RelocateSpec(split, newBase *rawbtf.Spec, opts *Options) ([]byte, error) {
	dist := split.Base()
	if dist == nil {
		return nil, ErrNotSplit
	}
	if dist.Base() != nil {
		return nil, fmt.Errorf("distilled base is itself split BTF")
	}
	if split.ByteOrder() != newBase.ByteOrder() {
		return nil, fmt.Errorf("split BTF is %v but the new base is %v", split.ByteOrder(), newBase.ByteOrder())
	}
	r := &relocator{split: split, dist: dist, newBase: newBase, embedded: make([]bool, dist.NextID())}
	if opts != nil {
		r.layout = opts.LayoutCompatible
	}
	if err := r.markEmbeds(); err != nil {
		return nil, err
	}
	idMap, err := r.mapBase()
	if err != nil {
		return nil, err
	}
	first, newFirst := split.FirstID(), newBase.NextID()
	enc := rawbtf.NewEncoder(newBase.ByteOrder(), newBase)
	for id := first; id < split.NextID(); id++ {
		t, err := split.Type(id)
		if err != nil {
			return nil, err
		}
		rec := t.Record()
		rec.MapRefs(func(ref rawbtf.TypeID) rawbtf.TypeID {
			switch {
			case ref == 0:
				return 0
			case ref >= first:
				return newFirst + (ref - first)
			}
			return idMap[ref]
		})
		if _, err := enc.Add(rec); err != nil {
			return nil, fmt.Errorf("split type [%d]: %w", id, err)
		}
	}
	return enc.Bytes(), nil
}

// LoadRelocated relocates like Relocate and loads the result with
// cilium/ebpf over newBaseSpec, which must be newBase as cilium/ebpf loaded
// it (the same bytes, hence the same IDs). The result is what
// ebpf.CollectionOptions' Programs.ExtraRelocationTargets takes.
func LoadRelocated(split, distilledBase []byte, newBase *Base, newBaseSpec *btf.Spec, opts *Options) (*btf.Spec, error) {
	s, err := ParseOverDistilled(split, distilledBase)
	if err != nil {
		return nil, err
	}
	return LoadRelocatedSpec(s, newBase.spec, newBaseSpec, opts)
}

// LoadRelocatedSpec is LoadRelocated on parsed BTF.
func LoadRelocatedSpec(split, newBase *rawbtf.Spec, newBaseSpec *btf.Spec, opts *Options) (*btf.Spec, error) {
	raw, err := RelocateSpec(split, newBase, opts)
	if err != nil {
		return nil, err
	}
	spec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(raw), newBaseSpec)
	if err != nil {
		return nil, fmt.Errorf("load relocated split BTF: %w", err)
	}
	return spec, nil
}

type relocator struct {
	split, dist, newBase *rawbtf.Spec
	embedded             []bool // by distilled base ID
	layout               bool
}

// markEmbeds marks the distilled composites the split embeds: their size
// must be kept.
func (r *relocator) markEmbeds() error {
	for id := r.split.FirstID(); id < r.split.NextID(); id++ {
		t, err := r.split.Type(id)
		if err != nil {
			return err
		}
		if err := EmbeddedBaseTypes(r.split, t, func(id rawbtf.TypeID) { r.embedded[id] = true }); err != nil {
			return err
		}
	}
	return nil
}

// mapBase maps every distilled base ID to a newBase ID.
func (r *relocator) mapBase() ([]rawbtf.TypeID, error) {
	idMap := make([]rawbtf.TypeID, r.dist.NextID())
	var unmapped []Unmapped
	allLayout := true
	for id := rawbtf.TypeID(1); id < r.dist.NextID(); id++ {
		d, err := r.dist.Type(id)
		if err != nil {
			return nil, err
		}
		target, u := r.match(d)
		if u != nil {
			unmapped = append(unmapped, *u)
			allLayout = allLayout && u.LayoutCompatible
			continue
		}
		idMap[id] = target
	}
	if len(unmapped) > 0 {
		return nil, &UnmappedError{Types: unmapped, Total: int(r.dist.NextID() - 1), LayoutCompatible: allLayout && !r.layout}
	}
	return idMap, nil
}

// match finds the newBase type for distilled type d, or says why there is
// none.
func (r *relocator) match(d rawbtf.Type) (rawbtf.TypeID, *Unmapped) {
	u := &Unmapped{ID: btf.TypeID(d.ID), Type: Describe(d), Embedded: r.embedded[d.ID]}
	switch d.Kind {
	case rawbtf.KindInt, rawbtf.KindFloat, rawbtf.KindFwd, rawbtf.KindStruct,
		rawbtf.KindUnion, rawbtf.KindEnum, rawbtf.KindEnum64:
	default:
		u.Reason = "a distilled base holds only ints, floats, forward declarations, structs, unions and enums"
		return 0, u
	}
	if d.Name == "" {
		u.Reason = "anonymous: a distilled base type is found by its name"
		return 0, u
	}
	var cands []rawbtf.Type
	composites := 0
	for _, id := range r.newBase.TypesByEssentialName(rawbtf.EssentialName(d.Name)) {
		c, err := r.newBase.Type(id)
		if err != nil || c.Name != d.Name {
			continue
		}
		cands = append(cands, c)
		if c.Kind.IsComposite() {
			composites++
		}
	}
	if len(cands) == 0 {
		u.Reason = "no type of this name in the new base"
		return 0, u
	}
	var strict, loose []rawbtf.Type
	for _, c := range cands {
		switch {
		case r.matchStrict(d, c, composites > 1):
			strict = append(strict, c)
		case r.matchLayout(d, c):
			loose = append(loose, c)
		}
	}
	switch {
	case len(strict) == 1:
		return strict[0].ID, nil
	case len(strict) > 1:
		u.Reason = "ambiguous: " + describeAll(strict)
		return 0, u
	case len(loose) == 1 && r.layout:
		return loose[0].ID, nil
	case len(loose) == 1:
		u.LayoutCompatible = true
		u.Reason = "layout-compatible only: " + describeAll(loose)
		return 0, u
	case len(loose) > 1:
		u.Reason = "ambiguous in layout-compatible mode: " + describeAll(loose)
		return 0, u
	}
	u.Reason = "no match among " + describeAll(cands)
	return 0, u
}

// matchStrict is libbpf's rule; sized says newBase has several composites
// of the name, so that composites must match by size too.
func (r *relocator) matchStrict(d, c rawbtf.Type, sized bool) bool {
	switch d.Kind {
	case rawbtf.KindFwd:
		switch c.Kind {
		case rawbtf.KindFwd:
			return c.KindFlag == d.KindFlag
		case rawbtf.KindStruct:
			return !d.KindFlag
		case rawbtf.KindUnion:
			return d.KindFlag
		}
		return false
	case rawbtf.KindInt:
		return c.Kind == rawbtf.KindInt && c.Size() == d.Size() && c.Int().Encoding == d.Int().Encoding
	case rawbtf.KindFloat:
		return c.Kind == rawbtf.KindFloat && c.Size() == d.Size()
	case rawbtf.KindEnum, rawbtf.KindEnum64:
		return c.Kind.IsEnum() && c.Size() == d.Size()
	case rawbtf.KindStruct, rawbtf.KindUnion:
		if c.Kind != d.Kind {
			return false
		}
		return c.Size() == d.Size() || !(r.embedded[d.ID] || sized)
	}
	return false
}

// matchLayout is what layout-compatible mode accepts on top of matchStrict.
func (r *relocator) matchLayout(d, c rawbtf.Type) bool {
	switch d.Kind {
	case rawbtf.KindInt:
		return c.Kind == rawbtf.KindInt && c.Size() == d.Size()
	case rawbtf.KindStruct, rawbtf.KindUnion:
		if r.embedded[d.ID] {
			return false
		}
		if c.Kind == rawbtf.KindFwd {
			return c.KindFlag == (d.Kind == rawbtf.KindUnion)
		}
		return c.Kind == d.Kind
	}
	return false
}

// maxListed bounds the candidates an error lists.
const maxListed = 4

func describeAll(ts []rawbtf.Type) string {
	var b strings.Builder
	for i, t := range ts {
		if i == maxListed {
			fmt.Fprintf(&b, " and %d more", len(ts)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s [%d]", Describe(t), t.ID)
	}
	return b.String()
}

// EmbeddedBaseTypes calls fn with every base composite that the split type
// t holds inline in a member: directly or through typedefs, qualifiers and
// arrays, not through pointers. Distill keeps the size of those, and
// Relocate requires the new base's to match it.
func EmbeddedBaseTypes(split *rawbtf.Spec, t rawbtf.Type, fn func(rawbtf.TypeID)) error {
	if !t.Kind.IsComposite() {
		return nil
	}
	for i := range t.Vlen {
		id := t.Member(i).Type
	chain:
		for range MaxChain {
			m, err := split.Type(id)
			if err != nil {
				return err
			}
			switch {
			case m.Kind == rawbtf.KindTypedef || m.Kind.IsQualifier():
				id = m.Ref()
			case m.Kind == rawbtf.KindArray:
				id = m.Array().Type
			case m.Kind.IsComposite():
				if id < split.FirstID() {
					fn(id)
				}
				break chain
			default:
				break chain
			}
		}
	}
	return nil
}

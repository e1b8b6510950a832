package btfdistill

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/btfrelocate"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Per-base-type marks of Distill.
const (
	needed   = 1 << iota // the split refers to the type, directly or not
	embedded             // a composite whose size the split's layout depends on
)

// Distill separates split BTF from the base it was built over. It returns
// a distilled base, a standalone blob that names each base type the split
// refers to, and the split BTF rewritten over that distilled base. The
// split's own types keep their order and come first; base types that
// cannot be matched by name later are copied to the end of the new split.
//
// What goes where, as libbpf's btf__distill_base with the review fixes of
// its v3 patch:
//   - named INT and FLOAT: to the distilled base, in full;
//   - named FWD: to the distilled base;
//   - named STRUCT and UNION: to the distilled base without members, with
//     their size when the split embeds them (as a member, directly or
//     through typedefs, qualifiers, type tags and arrays, not through
//     pointers) or when the base holds several composites of that name,
//     else as a FWD;
//   - named ENUM and ENUM64: to the distilled base as an ENUM without
//     values that keeps the base type's size and signedness;
//   - everything else the split reaches (anonymous types, pointers,
//     typedefs, arrays, qualifiers, type tags, function prototypes): to the
//     new split, in base ID order, with their references followed.
//
// The distilled base lists its types sorted by name, so it depends on what
// the split refers to and not on the base's numbering. A reference from the
// split to a base type of another kind (FUNC, VAR, DATASEC, DECL_TAG) is an
// error naming every such type.
//
// split is the module's raw split BTF over base.
func Distill(split []byte, base *btfrelocate.Base) (distilledBase, newSplit []byte, err error) {
	s, err := base.ParseSplit(split)
	if err != nil {
		return nil, nil, err
	}
	return DistillSpec(s)
}

// DistillSpec is Distill on parsed split BTF.
func DistillSpec(split *rawbtf.Spec) (distilledBase, newSplit []byte, err error) {
	base := split.Base()
	if base == nil {
		return nil, nil, btfrelocate.ErrNotSplit
	}
	d := &distiller{split: split, base: base, marks: make([]uint8, base.NextID())}
	if err := d.walkSplit(); err != nil {
		return nil, nil, err
	}
	distBase, toBase, err := d.encodeBase()
	if err != nil {
		return nil, nil, fmt.Errorf("distilled base: %w", err)
	}
	newSplit, err = d.encodeSplit(distBase, toBase)
	if err != nil {
		return nil, nil, fmt.Errorf("new split: %w", err)
	}
	return distBase.Raw(), newSplit, nil
}

type distiller struct {
	split, base *rawbtf.Spec
	marks       []uint8 // by base ID
	unexpected  []string
}

// walkSplit marks every base type the split reaches, and the composites it
// embeds.
func (d *distiller) walkSplit() error {
	for id := d.split.FirstID(); id < d.split.NextID(); id++ {
		t, err := d.split.Type(id)
		if err != nil {
			return err
		}
		if err := d.visit(t); err != nil {
			return err
		}
	}
	if len(d.unexpected) > 0 {
		return fmt.Errorf("split BTF refers to base types a distilled base cannot describe: %s",
			strings.Join(d.unexpected, ", "))
	}
	return nil
}

// visit marks what the type t, which ends up in the new split, refers to.
func (d *distiller) visit(t rawbtf.Type) error {
	err := btfrelocate.EmbeddedBaseTypes(d.split, t, func(id rawbtf.TypeID) { d.marks[id] |= embedded })
	if err != nil {
		return err
	}
	var refs []rawbtf.TypeID
	r := t.Record()
	r.MapRefs(func(ref rawbtf.TypeID) rawbtf.TypeID {
		refs = append(refs, ref)
		return ref
	})
	for _, ref := range refs {
		if err := d.need(ref, t.ID); err != nil {
			return err
		}
	}
	return nil
}

// need marks base type id, referred to by type from, and what it refers
// to unless it is a named type the distilled base describes by name.
func (d *distiller) need(id, from rawbtf.TypeID) error {
	if id == 0 || id >= d.split.FirstID() || d.marks[id]&needed != 0 {
		return nil
	}
	t, err := d.base.Type(id)
	if err != nil {
		return err
	}
	d.marks[id] |= needed
	switch t.Kind {
	case rawbtf.KindInt, rawbtf.KindFloat, rawbtf.KindFwd, rawbtf.KindArray,
		rawbtf.KindStruct, rawbtf.KindUnion, rawbtf.KindTypedef, rawbtf.KindEnum,
		rawbtf.KindEnum64, rawbtf.KindPtr, rawbtf.KindConst, rawbtf.KindRestrict,
		rawbtf.KindVolatile, rawbtf.KindFuncProto, rawbtf.KindTypeTag:
	default:
		d.unexpected = append(d.unexpected, fmt.Sprintf("%v %q [%d] (referred to by [%d])", t.Kind, t.Name, id, from))
		return nil
	}
	if toDistilledBase(t) {
		return nil
	}
	// The type moves to the new split: what it refers to is needed too.
	return d.visit(t)
}

// toDistilledBase reports whether base type t is described in the
// distilled base rather than copied to the new split.
func toDistilledBase(t rawbtf.Type) bool {
	if t.Name == "" {
		return false
	}
	switch t.Kind {
	case rawbtf.KindInt, rawbtf.KindFloat, rawbtf.KindFwd, rawbtf.KindStruct,
		rawbtf.KindUnion, rawbtf.KindEnum, rawbtf.KindEnum64:
		return true
	}
	return false
}

// encodeBase writes the distilled base and returns it parsed, with the
// map from base IDs to its IDs.
func (d *distiller) encodeBase() (*rawbtf.Spec, map[rawbtf.TypeID]rawbtf.TypeID, error) {
	var types []rawbtf.Type
	for id := rawbtf.TypeID(1); id < d.split.FirstID(); id++ {
		if d.marks[id]&needed == 0 {
			continue
		}
		t, err := d.base.Type(id)
		if err != nil {
			return nil, nil, err
		}
		if toDistilledBase(t) {
			types = append(types, t)
		}
	}
	recs := make([]rawbtf.Record, len(types))
	for i, t := range types {
		recs[i] = d.distilled(t)
	}
	order := make([]int, len(types))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ra, rb := &recs[a], &recs[b]
		return cmp.Or(strings.Compare(ra.Name, rb.Name), cmp.Compare(ra.Kind, rb.Kind),
			cmp.Compare(ra.SizeType, rb.SizeType), cmp.Compare(types[a].ID, types[b].ID))
	})
	enc := rawbtf.NewEncoder(d.base.ByteOrder(), nil)
	toBase := make(map[rawbtf.TypeID]rawbtf.TypeID, len(types))
	for _, i := range order {
		nid, err := enc.Add(recs[i])
		if err != nil {
			return nil, nil, fmt.Errorf("base type [%d]: %w", types[i].ID, err)
		}
		toBase[types[i].ID] = nid
	}
	spec, err := rawbtf.Parse(enc.Bytes(), nil)
	if err != nil {
		return nil, nil, err
	}
	return spec, toBase, nil
}

// distilled is the distilled base's description of base type t.
func (d *distiller) distilled(t rawbtf.Type) rawbtf.Record {
	switch t.Kind {
	case rawbtf.KindStruct, rawbtf.KindUnion:
		if d.marks[t.ID]&embedded != 0 || d.ambiguous(t) {
			return rawbtf.Record{Kind: t.Kind, Name: t.Name, SizeType: t.Size()}
		}
		return rawbtf.Record{Kind: rawbtf.KindFwd, Name: t.Name, KindFlag: t.Kind == rawbtf.KindUnion}
	case rawbtf.KindEnum, rawbtf.KindEnum64:
		return rawbtf.Record{Kind: rawbtf.KindEnum, Name: t.Name, SizeType: t.Size(), KindFlag: t.Signed()}
	}
	return t.Record() // INT, FLOAT, FWD: in full
}

// ambiguous reports whether the base holds another composite named like
// the composite t, so that only its size tells them apart.
func (d *distiller) ambiguous(t rawbtf.Type) bool {
	for _, id := range d.base.TypesByEssentialName(rawbtf.EssentialName(t.Name)) {
		if id == t.ID || id >= d.split.FirstID() {
			continue
		}
		o, err := d.base.Type(id)
		if err == nil && o.Kind.IsComposite() && o.Name == t.Name {
			return true
		}
	}
	return false
}

// encodeSplit writes the split's types, then the base types that move,
// over the distilled base.
func (d *distiller) encodeSplit(distBase *rawbtf.Spec, toBase map[rawbtf.TypeID]rawbtf.TypeID) ([]byte, error) {
	first := d.split.FirstID()
	newFirst := distBase.NextID()
	moved := make(map[rawbtf.TypeID]rawbtf.TypeID)
	var movedIDs []rawbtf.TypeID
	next := newFirst + (d.split.NextID() - first)
	for id := rawbtf.TypeID(1); id < first; id++ {
		if d.marks[id]&needed == 0 {
			continue
		}
		if _, ok := toBase[id]; ok {
			continue
		}
		moved[id] = next
		movedIDs = append(movedIDs, id)
		next++
	}
	remap := func(id rawbtf.TypeID) rawbtf.TypeID {
		switch {
		case id == 0:
			return 0
		case id >= first:
			return newFirst + (id - first)
		}
		if nid, ok := toBase[id]; ok {
			return nid
		}
		return moved[id]
	}
	enc := rawbtf.NewEncoder(d.split.ByteOrder(), distBase)
	add := func(src *rawbtf.Spec, id rawbtf.TypeID) error {
		t, err := src.Type(id)
		if err != nil {
			return err
		}
		r := t.Record()
		r.MapRefs(remap)
		if _, err := enc.Add(r); err != nil {
			return fmt.Errorf("type [%d]: %w", id, err)
		}
		return nil
	}
	for id := first; id < d.split.NextID(); id++ {
		if err := add(d.split, id); err != nil {
			return nil, err
		}
	}
	for _, id := range movedIDs {
		if err := add(d.base, id); err != nil {
			return nil, fmt.Errorf("base %w", err)
		}
	}
	return enc.Bytes(), nil
}

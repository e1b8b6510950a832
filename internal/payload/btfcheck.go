package payload

import (
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// This file checks a payload's BTF before cilium/ebpf loads it and says
// what cilium/ebpf will hold once it has: the runtime charges that to the
// payload's budget, then loads the BTF and decodes every type.
//
// cilium/ebpf's btf.LoadSplitSpecFromReader checks little: it indexes the
// type records and their own names, and decodes a type (its members'
// names, the types it refers to, its decl tags) only when someone asks for
// it, so a blob whose member names a string past the table loaded fine and
// failed in the agent's CO-RE relocation ("string at offset 172 is not
// null terminated", issue 33). Decoding costs far more than the blob
// (TestCostModel: about 100 bytes per 12-byte pointer, 220 per type of a
// kernel's BTF, and a copy of every name each time it is used: 65,535
// members naming one 1 MiB string take 64 GiB), and it recurses along
// references, about 1 KB of goroutine stack per level: a chain of
// 400,000 pointers, 4.8 MB of BTF, overflows Go's 1 GB stack limit,
// "fatal error: stack overflow", which no recover catches.
//
// So the runtime decodes every type once, at selection, in ID order, after
// charging what CheckBTF computes here: a decoded spec answers every later
// lookup from its cache, so the agent's relocations neither fail on a
// malformed type nor recurse. CheckBTF follows cilium/ebpf v0.22's decoder
// (btf/unmarshal.go, inflateType) type by type, in its order, so the depth
// it finds is the one decoding reaches.

// BTFCost is what cilium/ebpf takes to hold one blob of BTF, in bytes.
type BTFCost struct {
	// Load is what the *btf.Spec loaded from the blob holds before any
	// type is decoded: its copy of the blob (io.ReadAll's buffer), the
	// type offsets, the name index, the decl tag index.
	Load uint64
	// Decode is what decoding every type of the blob in ID order adds:
	// the types, their members, values and parameters, the copies of
	// their names, and the two map entries per type; for split BTF with
	// its base counted, also the base types that decoding reaches, which
	// a split spec decodes into its own copy of the base.
	Decode uint64
	// Stack is the goroutine stack decoding in ID order takes at its
	// deepest, Depth types.
	Stack uint64
	Depth int
}

// BTF is a blob of BTF that CheckBTF accepted.
type BTF struct {
	Spec *rawbtf.Spec
	Cost BTFCost
	// tags lists each type's DECL_TAGs, in ID order, as cilium/ebpf's
	// decoder applies them: a decoder has the tags of its own types.
	tags map[rawbtf.TypeID][]rawbtf.TypeID
	held uint64 // charged for Spec's index and tags
}

// KernelBTF wraps the running kernel's own BTF, parsed, as a base for
// CheckBTF without countBase: it is not the payload's, and decoding a
// module does not follow it.
func KernelBTF(spec *rawbtf.Spec) *BTF { return &BTF{Spec: spec} }

// Release gives back what b holds of the budget CheckBTF charged.
func (b *BTF) Release(bud *Budget) {
	bud.Release(b.held)
	b.held = 0
}

// Costs of cilium/ebpf's structures, from its v0.22 types.
const (
	// stackPerLevel is the goroutine stack charged per level of decoding:
	// inflateType and its fixup closure take about 1 KB (993 bytes
	// measured), a stack doubles as it grows, and the smaller stacks it
	// outgrew stay with the runtime's stack spans: up to four times what
	// the deepest level needs (TestCostModel: 3.3 KB per level for a
	// 20,000-deep chain). stackBase is the first levels' share, which the
	// doubling from Go's 8 KB starting stack makes larger.
	stackPerLevel = 5 << 10
	stackBase     = 64 << 10
	// maxDepth bounds decoding's nesting whatever the budget: 100,000
	// levels are about 100 MB of stack, a tenth of Go's limit. Real BTF
	// decodes within a few hundred.
	maxDepth = 100_000
	// typeMaps is what one decoded type adds to the decoder's two maps
	// (types by ID and IDs by type): a slot of 24 bytes in groups of 8
	// at most 7/8 full, doubling as they grow (TestCostModel: about 85
	// bytes for both, a chain of pointers).
	typeMaps = 2 * 64
	// specFixed is a spec's or a copied base's fixed part: the Spec,
	// decoder and string table structs and their empty maps.
	specFixed = 2 << 10
	// tagCost is what one decl tag adds where it is applied: its value
	// appended to a Tags slice, which doubles as it grows.
	tagCost = 2 * uint64(unsafe.Sizeof(""))
)

// kindSizes are the sizes of the structs cilium/ebpf decodes each kind
// into, by wire kind.
var kindSizes = [...]uintptr{
	rawbtf.KindInt:       unsafe.Sizeof(btf.Int{}),
	rawbtf.KindPtr:       unsafe.Sizeof(btf.Pointer{}),
	rawbtf.KindArray:     unsafe.Sizeof(btf.Array{}),
	rawbtf.KindStruct:    unsafe.Sizeof(btf.Struct{}),
	rawbtf.KindUnion:     unsafe.Sizeof(btf.Union{}),
	rawbtf.KindEnum:      unsafe.Sizeof(btf.Enum{}),
	rawbtf.KindFwd:       unsafe.Sizeof(btf.Fwd{}),
	rawbtf.KindTypedef:   unsafe.Sizeof(btf.Typedef{}),
	rawbtf.KindVolatile:  unsafe.Sizeof(btf.Volatile{}),
	rawbtf.KindConst:     unsafe.Sizeof(btf.Const{}),
	rawbtf.KindRestrict:  unsafe.Sizeof(btf.Restrict{}),
	rawbtf.KindFunc:      unsafe.Sizeof(btf.Func{}),
	rawbtf.KindFuncProto: unsafe.Sizeof(btf.FuncProto{}),
	rawbtf.KindVar:       unsafe.Sizeof(btf.Var{}),
	rawbtf.KindDatasec:   unsafe.Sizeof(btf.Datasec{}),
	rawbtf.KindFloat:     unsafe.Sizeof(btf.Float{}),
	rawbtf.KindDeclTag:   unsafe.Sizeof(declTag{}),
	rawbtf.KindTypeTag:   unsafe.Sizeof(btf.TypeTag{}),
	rawbtf.KindEnum64:    unsafe.Sizeof(btf.Enum{}),
}

// declTag has the fields of cilium/ebpf's unexported declTag.
type declTag struct {
	Type  btf.Type
	Value string
	Index int
}

// elemSize is the size of what cilium/ebpf decodes one vlen element of
// kind k into, 0 for kinds without elements.
func elemSize(k rawbtf.Kind) uintptr {
	switch k {
	case rawbtf.KindStruct, rawbtf.KindUnion:
		return unsafe.Sizeof(btf.Member{})
	case rawbtf.KindEnum, rawbtf.KindEnum64:
		return unsafe.Sizeof(btf.EnumValue{})
	case rawbtf.KindFuncProto:
		return unsafe.Sizeof(btf.FuncParam{})
	case rawbtf.KindDatasec:
		return unsafe.Sizeof(btf.VarSecinfo{})
	}
	return 0
}

// alloc bounds what the Go allocator takes for an object of n bytes:
// size classes waste at most an eighth, objects above 32 KiB take whole
// 8 KiB pages.
func alloc(n uint64) uint64 {
	switch {
	case n == 0:
		return 0
	case n <= 32<<10:
		return n + n/8 + 16
	}
	return n + 8<<10
}

// CheckBTF checks raw as BTF over base (nil: standalone BTF) and computes
// what cilium/ebpf takes to load it and decode every type. With
// countBase, decoding the split's types counts the base types it reaches
// (a split spec over a copy of a base loaded from a payload decodes them
// again); without, base types are not followed (the running kernel's own
// BTF, which the agent would decode the same way without btfembed).
//
// rawbtf.Parse checks the header, that the string table ends with a NUL
// (and, standalone, starts with the empty string), that every record is
// framed, and that every name offset starts a string and every reference
// names a type. The rest of what cilium/ebpf checks while decoding (decl
// tags on the kinds and components it accepts) is left to decoding every
// type, which the runtime does once CheckBTF's cost is charged.
//
// CheckBTF charges bud for its own work and keeps charged, until
// BTF.Release, the index the result holds; a charge bud cannot take fails
// as Budget.Charge does. Its other errors say what is wrong with raw and
// do not wrap ErrCorrupt: only the caller knows whether raw is the
// payload's (the runtime's embedded BTF, corrupt then) or not (a BTF file
// the user supplies).
func CheckBTF(raw []byte, base *BTF, countBase bool, bud *Budget) (*BTF, error) {
	// rawbtf's index: a uint32 per record of 12 bytes or more, in a slice
	// that may double as it grows.
	held := uint64(len(raw))
	if err := bud.Charge(held, "BTF index"); err != nil {
		return nil, err
	}
	b, err := checkBTF(raw, base, countBase, bud, &held)
	if err != nil {
		bud.Release(held)
		return nil, err
	}
	b.held = held
	return b, nil
}

func checkBTF(raw []byte, base *BTF, countBase bool, bud *Budget, held *uint64) (*BTF, error) {
	var baseSpec *rawbtf.Spec
	if base != nil {
		baseSpec = base.Spec
	} else {
		countBase = false
	}
	spec, err := rawbtf.Parse(raw, baseSpec)
	if err != nil {
		return nil, err
	}
	b := &BTF{Spec: spec}
	first, next := spec.FirstID(), spec.NextID()
	own := uint64(next - first)

	// One pass for the load cost and the decl tags.
	var named, tags uint64
	for id := first; id < next; id++ {
		t, err := spec.Type(id)
		if err != nil {
			return nil, err
		}
		// rawbtf reads vlen from 24 bits and the kind from 7; the format
		// leaves bits 16-23 and 29-30 unused, and cilium/ebpf (like the
		// kernel, which refuses them) reads 16 and 5: where they disagree
		// the two would frame the records differently.
		if t.Vlen > 0xffff || t.Kind > 0x1f {
			return nil, fmt.Errorf("type %d: unused bits of its info word set", id)
		}
		if t.Name != "" {
			named++
		}
		if t.Kind == rawbtf.KindDeclTag {
			tags++
		}
	}
	if tags > 0 {
		c := tags * sizeMapEntry
		if err := bud.Charge(c, "BTF decl tags"); err != nil {
			return nil, err
		}
		*held += c
		b.tags = make(map[rawbtf.TypeID][]rawbtf.TypeID)
		for id := first; id < next; id++ {
			if t, _ := spec.Type(id); t.Kind == rawbtf.KindDeclTag {
				b.tags[t.Ref()] = append(b.tags[t.Ref()], id)
			}
		}
	}
	// io.ReadAll's buffer: a slice grown by append, a quarter at a time
	// past 256 bytes, rounded to a size class.
	buf := uint64(len(raw))
	buf += buf/2 + 4<<10
	b.Cost.Load = specFixed + buf + 8*(own+1) + 8*named + tags*sizeMapEntry
	if base != nil {
		b.Cost.Load += specFixed // the copy of the base
	}

	// Decode every type in ID order, as cilium/ebpf will.
	lo := first
	if countBase {
		lo = 1
	}
	scratch := uint64(next - lo)
	if err := bud.Charge(scratch, "BTF decoding order"); err != nil {
		return nil, err
	}
	defer func() { bud.Release(scratch) }()
	d := &decodeSim{b: b, base: base, lo: lo, seen: make([]bool, next-lo)}
	for id := first; id < next; id++ {
		if d.seen[id-lo] {
			continue
		}
		if err := d.decode(id, bud, &scratch); err != nil {
			return nil, err
		}
	}
	b.Cost.Stack = stackBase + uint64(b.Cost.Depth)*stackPerLevel
	return b, nil
}

// decodeSim follows cilium/ebpf's decoder over one blob, with an explicit
// stack where the decoder recurses.
type decodeSim struct {
	b, base *BTF
	lo      rawbtf.TypeID // the least ID followed: the blob's first, or 1 with its base
	seen    []bool        // by ID - lo: decoded, or being decoded
	stack   []frame
}

type frame struct {
	t    rawbtf.Type
	next int // the next reference to follow, then the next decl tag
}

// decode decodes id and what it refers to, depth first, as
// inflateType does: a type is marked before its references are followed,
// so a cycle ends at it, and its decl tags are decoded after them.
func (d *decodeSim) decode(id rawbtf.TypeID, bud *Budget, scratch *uint64) error {
	if err := d.push(id, bud, scratch); err != nil {
		return err
	}
	for len(d.stack) > 0 {
		f := &d.stack[len(d.stack)-1]
		ref, ok := d.child(f)
		if !ok {
			d.stack = d.stack[:len(d.stack)-1]
			continue
		}
		f.next++
		if ref == 0 || ref < d.lo || d.seen[ref-d.lo] {
			continue // void, a base not followed, or decoded
		}
		if err := d.push(ref, bud, scratch); err != nil {
			return err
		}
	}
	return nil
}

func (d *decodeSim) push(id rawbtf.TypeID, bud *Budget, scratch *uint64) error {
	t, err := d.b.Spec.Type(id)
	if err != nil {
		return err
	}
	d.seen[id-d.lo] = true
	d.b.Cost.Decode += d.typeCost(t)
	if len(d.stack) == cap(d.stack) {
		// The frames grow as the decoder's stack would; charge them.
		grow := uint64(max(cap(d.stack), 16)) * uint64(unsafe.Sizeof(frame{}))
		if err := bud.Charge(grow, "BTF decoding order"); err != nil {
			return err
		}
		*scratch += grow
		d.stack = append(make([]frame, 0, 2*max(cap(d.stack), 16)), d.stack...)
	}
	d.stack = append(d.stack, frame{t: t})
	d.b.Cost.Depth = max(d.b.Cost.Depth, len(d.stack))
	if d.b.Cost.Depth > maxDepth {
		return fmt.Errorf("BTF: decoding type %d nests more than %d types deep", id, maxDepth)
	}
	return nil
}

// child returns the reference of f's type that inflateType follows
// next, then its decl tags, or false when there is none left.
func (d *decodeSim) child(f *frame) (rawbtf.TypeID, bool) {
	t, i := f.t, f.next
	var refs int
	switch t.Kind {
	case rawbtf.KindPtr, rawbtf.KindTypedef, rawbtf.KindVolatile, rawbtf.KindConst, rawbtf.KindRestrict,
		rawbtf.KindFunc, rawbtf.KindVar, rawbtf.KindDeclTag, rawbtf.KindTypeTag:
		if i == 0 {
			return t.Ref(), true
		}
		refs = 1
	case rawbtf.KindArray:
		switch i {
		case 0:
			return t.Array().Index, true
		case 1:
			return t.Array().Type, true
		}
		refs = 2
	case rawbtf.KindStruct, rawbtf.KindUnion:
		if i < t.Vlen {
			return t.Member(i).Type, true
		}
		refs = t.Vlen
	case rawbtf.KindFuncProto:
		switch {
		case i < t.Vlen:
			return t.Param(i).Type, true
		case i == t.Vlen:
			return t.Ref(), true
		}
		refs = t.Vlen + 1
	case rawbtf.KindDatasec:
		if i < t.Vlen {
			return t.VarSecinfo(i).Type, true
		}
		refs = t.Vlen
	}
	if tags := d.tagsOf(t.ID); i-refs < len(tags) {
		return tags[i-refs], true
	}
	return 0, false
}

// tagsOf is the decl tags the decoder holding id applies to it.
func (d *decodeSim) tagsOf(id rawbtf.TypeID) []rawbtf.TypeID {
	if id >= d.b.Spec.FirstID() {
		return d.b.tags[id]
	}
	return d.base.tags[id]
}

// typeCost is what decoding t takes: the struct of its kind, its
// elements, a copy of each name, the decoder's map entries, and what its
// decl tags add to it.
func (d *decodeSim) typeCost(t rawbtf.Type) uint64 {
	c := uint64(typeMaps)
	if int(t.Kind) < len(kindSizes) {
		c += alloc(uint64(kindSizes[t.Kind]))
	}
	c += alloc(uint64(len(t.Name)))
	if es := elemSize(t.Kind); es != 0 {
		c += alloc(uint64(t.Vlen) * uint64(es))
		for i := range t.Vlen {
			var name string
			switch t.Kind {
			case rawbtf.KindStruct, rawbtf.KindUnion:
				name = t.Member(i).Name
			case rawbtf.KindEnum, rawbtf.KindEnum64:
				name = t.EnumValue(i).Name
			case rawbtf.KindFuncProto:
				name = t.Param(i).Name
			}
			c += alloc(uint64(len(name)))
		}
	}
	if t.Kind == rawbtf.KindInt {
		// A legacy bitfield's entry in the decoder's third map.
		if enc := t.Int(); enc.Offset != 0 || uint64(enc.Bits) != 8*uint64(t.Size()) {
			c += typeMaps / 2
		}
	}
	if tags := d.tagsOf(t.ID); len(tags) > 0 {
		c += uint64(len(tags)) * tagCost
		if t.Kind == rawbtf.KindFunc {
			// The first tag gives the function a tag list per
			// parameter of its prototype.
			if proto, err := t.Spec().Type(t.Ref()); err == nil && proto.Kind == rawbtf.KindFuncProto {
				c += alloc(uint64(proto.Vlen) * uint64(unsafe.Sizeof([]string(nil))))
			}
		}
	}
	return c
}

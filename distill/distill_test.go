package distill_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// roundTrip distills m over its own kernel, relocates the result back onto
// that kernel and checks, with cilium/ebpf's reader, that every type of the
// module is what it was.
func roundTrip(t *testing.T, m module) {
	t.Helper()
	k := kernelFor(t, m.release)
	spec := k.cilium()
	orig := parseSplit(t, m.btf, k.raw)
	distBase, distSplit := distillModule(t, m)
	checkDistilled(t, m, spec, distBase)
	checkLoads(t, distBase, distSplit)

	raw, err := distill.RelocateSpec(distSplit, k.raw, nil)
	if err != nil {
		t.Fatalf("relocate %s back onto %s: %v", m.name, k.name, err)
	}
	origSpec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(m.btf), spec)
	if err != nil {
		t.Fatal(err)
	}
	relocSpec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(raw), spec)
	if err != nil {
		t.Fatalf("cilium/ebpf rejects the relocated %s: %v", m.name, err)
	}
	if err := sameSplit(origSpec, relocSpec, orig.FirstID(), k.raw.NextID(), spec, spec); err != nil {
		t.Fatalf("%s after the round trip: %v", m.name, err)
	}
	reloc := parseSplit(t, raw, k.raw)
	if got, want := reloc.NextID()-reloc.FirstID(), orig.NextID()-orig.FirstID(); got < want {
		t.Fatalf("%s: relocated split has %d types, fewer than the original %d", m.name, got, want)
	}
}

// checkLoads loads the distilled pair with cilium/ebpf.
func checkLoads(t *testing.T, distBase, distSplit *rawbtf.Spec) {
	t.Helper()
	base, err := btf.LoadSpecFromReader(bytes.NewReader(distBase.Raw()))
	if err != nil {
		t.Fatalf("cilium/ebpf rejects the distilled base: %v", err)
	}
	if _, err := btf.LoadSplitSpecFromReader(bytes.NewReader(distSplit.Raw()), base); err != nil {
		t.Fatalf("cilium/ebpf rejects the distilled split: %v", err)
	}
}

// checkDistilled checks the distilled base against the rules of the
// distill-base patch, computed independently on cilium/ebpf's view of the
// module (over spec, its kernel): every entry is a named int, float, fwd, or member-less struct,
// union or enum that describes a base type of that name; and every base
// composite a module struct or union embeds is described with its size.
func checkDistilled(t *testing.T, m module, spec *btf.Spec, distBase *rawbtf.Spec) {
	t.Helper()
	type key struct {
		kind rawbtf.Kind
		name string
	}
	sized := map[key]uint32{}
	for id := rawbtf.TypeID(1); id < distBase.NextID(); id++ {
		d, err := distBase.Type(id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name == "" {
			t.Fatalf("%s: distilled base type [%d] is anonymous", m.name, id)
		}
		var want []btf.Type
		base, _ := spec.AnyTypesByName(d.Name)
		for _, b := range base {
			if describes(d, b) {
				want = append(want, b)
			}
		}
		if len(want) == 0 {
			t.Errorf("%s: distilled %s describes no base type (base has %v)", m.name, distill.Describe(d), base)
		}
		if d.Kind.IsComposite() {
			sized[key{d.Kind, d.Name}] = d.Size()
		}
	}
	split, err := btf.LoadSplitSpecFromReader(bytes.NewReader(m.btf), spec)
	if err != nil {
		t.Fatal(err)
	}
	for typ, err := range split.All() {
		if err != nil {
			t.Fatal(err)
		}
		var members []btf.Member
		switch c := typ.(type) {
		case *btf.Struct:
			members = c.Members
		case *btf.Union:
			members = c.Members
		}
		if inSpec(spec, typ) {
			continue
		}
		for _, mem := range members {
			emb := embeddedComposite(mem.Type)
			if emb == nil || emb.TypeName() == "" || !inSpec(spec, emb) {
				continue
			}
			kind := rawbtf.KindStruct
			if _, ok := emb.(*btf.Union); ok {
				kind = rawbtf.KindUnion
			}
			size, _ := btf.Sizeof(emb)
			if got, ok := sized[key{kind, emb.TypeName()}]; !ok || got != uint32(size) {
				t.Errorf("%s: %v embeds base %v, distilled without its size", m.name, typ, emb)
			}
		}
	}
}

// embeddedComposite follows a member type through typedefs, qualifiers,
// type tags and arrays, and returns the struct or union it ends at.
func embeddedComposite(typ btf.Type) btf.Type {
	for range distill.MaxChain {
		switch t := typ.(type) {
		case *btf.Typedef:
			typ = t.Type
		case *btf.Volatile:
			typ = t.Type
		case *btf.Const:
			typ = t.Type
		case *btf.Restrict:
			typ = t.Type
		case *btf.TypeTag:
			typ = t.Type
		case *btf.Array:
			typ = t.Type
		case *btf.Struct, *btf.Union:
			return t
		default:
			return nil
		}
	}
	return nil
}

// describes reports whether distilled type d describes base type b.
func describes(d rawbtf.Type, b btf.Type) bool {
	size, _ := btf.Sizeof(b)
	switch d.Kind {
	case rawbtf.KindInt:
		i, ok := b.(*btf.Int)
		return ok && i.Size == d.Size() && uint8(i.Encoding) == d.Int().Encoding && d.Int().Bits == uint8(8*i.Size)
	case rawbtf.KindFloat:
		f, ok := b.(*btf.Float)
		return ok && f.Size == d.Size()
	case rawbtf.KindFwd:
		return d.Vlen == 0 && kindClass(b) == map[bool]string{false: "struct", true: "union"}[d.KindFlag]
	case rawbtf.KindStruct:
		_, ok := b.(*btf.Struct)
		return ok && d.Vlen == 0 && uint32(size) == d.Size()
	case rawbtf.KindUnion:
		_, ok := b.(*btf.Union)
		return ok && d.Vlen == 0 && uint32(size) == d.Size()
	case rawbtf.KindEnum:
		e, ok := b.(*btf.Enum)
		return ok && d.Vlen == 0 && e.Size == d.Size() && e.Signed == d.Signed()
	}
	return false
}

func TestRoundTripCommitted(t *testing.T) {
	for _, m := range committedModules(t) {
		t.Run(m.name+"-"+m.release, func(t *testing.T) { roundTrip(t, m) })
	}
}

func TestDistillNotSplit(t *testing.T) {
	k := kernelFor(t, "6.1.0-47-amd64")
	if _, _, err := distill.DistillSpec(k.raw); !errors.Is(err, distill.ErrNotSplit) {
		t.Fatalf("Distill(vmlinux) = %v, want ErrNotSplit", err)
	}
	if _, err := distill.RelocateSpec(k.raw, k.raw, nil); !errors.Is(err, distill.ErrNotSplit) {
		t.Fatalf("Relocate(vmlinux) = %v, want ErrNotSplit", err)
	}
}

// TestDistillUnexpectedKind adds to a real module declaration tags on a
// vmlinux function and a vmlinux variable: Distill must name both, since a
// distilled base describes neither.
func TestDistillUnexpectedKind(t *testing.T) {
	k := kernelFor(t, "6.12.118+deb12-amd64")
	var nvme module
	for _, m := range committedModules(t) {
		if m.name == "nvme" {
			nvme = m
		}
	}
	split := parseSplit(t, nvme.btf, k.raw)
	funcs := k.raw.TypesByEssentialName("schedule")
	vars := k.raw.TypesByEssentialName("runqueues")
	if len(funcs) != 1 || len(vars) == 0 {
		t.Fatalf("vmlinux has %d types named schedule, %d named runqueues", len(funcs), len(vars))
	}
	var varID rawbtf.TypeID
	for _, id := range vars {
		if typ, _ := k.raw.Type(id); typ.Kind == rawbtf.KindVar {
			varID = id
		}
	}
	enc := rawbtf.NewEncoder(split.ByteOrder(), k.raw)
	for id := split.FirstID(); id < split.NextID(); id++ {
		typ, err := split.Type(id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := enc.Add(typ.Record()); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []rawbtf.Record{
		{Kind: rawbtf.KindDeclTag, Name: "test", SizeType: uint32(funcs[0]), ComponentIdx: -1},
		{Kind: rawbtf.KindDeclTag, Name: "test", SizeType: uint32(varID), ComponentIdx: -1},
	} {
		if _, err := enc.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := distill.DistillSpec(parseSplit(t, enc.Bytes(), k.raw))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`func "schedule"`, `var "runqueues"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

package corpus

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Verify mode (ImportOptions.CacheVerify) runs pahole again on an input
// the cache holds and compares the entry with pahole's kernel. The
// comparison cannot be of bytes: pahole 1.24 with -j (which the kernel's
// build passes from 5.17 on) encodes a varying set of FUNC records. Three
// imports of the shared corpus's nobtf 6.1.176 vmlinux gave 25,564,
// 25,577 and 25,576 FUNCs, each set missing some of the others' (one
// lacked __x64_sys_bpf), while every other type was the same. So a kernel
// is summarized by its key, its modules and, per BTF blob, a digest of its
// types that leaves out FUNC records (and the FUNC_PROTOs and decl tags
// that come and go with them); a forged entry (another kernel's BTF, a
// struct with other offsets) differs there. Verify mode imports what
// pahole made, never the entry, so FUNCs the digest leaves out are never
// taken from the cache.

// dwarfSummary is what verify mode compares of a kernel made from DWARF,
// with paths relative to the source as the cache keeps them.
type dwarfSummary struct {
	key     kernelkey.Key
	vmlinux typesDigest
	modules []moduleSummary
	skipped []cachedSkip
}

type moduleSummary struct {
	name, member string
	types        typesDigest
}

// typesDigest is the SHA-256 of the sorted content hashes of a blob's
// types, FUNCs left out (btfDigester); a blob that does not parse has
// the zero digest and says why in err.
type typesDigest struct {
	sum [sha256.Size]byte
	err string
}

// summarizeDWARF summarizes a kernel and the modules it skipped; member
// makes a path relative to the source (dwarfCache.member). seed is the
// same for the two summaries compared, and chosen at random, so that a
// forger cannot aim at a collision of the 64-bit type hashes.
func summarizeDWARF(k *Kernel, skipped []error, member func(string) string, seed maphash.Seed) dwarfSummary {
	s := dwarfSummary{key: k.Key}
	base, err := extract.ParseBTF(k.VMLinux, nil)
	var bd *btfDigester
	if err != nil {
		s.vmlinux.err = err.Error()
	} else {
		bd = newBTFDigester(base, nil, seed)
		s.vmlinux.sum = bd.digest()
	}
	for _, m := range k.Modules {
		ms := moduleSummary{name: m.Name, member: member(m.Path)}
		if bd == nil {
			ms.types.err = "no base"
		} else if spec, err := extract.ParseBTF(m.BTF, base); err != nil {
			ms.types.err = err.Error()
		} else {
			ms.types.sum = newBTFDigester(spec, bd, seed).digest()
		}
		s.modules = append(s.modules, ms)
	}
	for _, err := range skipped {
		var ke *KernelError
		if errors.As(err, &ke) {
			s.skipped = append(s.skipped, cachedSkip{Member: member(ke.Path), Err: ke.Err.Error()})
		}
	}
	return s
}

// diff says how a cached kernel (s) differs from the one pahole made
// (fresh), or "" when it does not.
func (s dwarfSummary) diff(fresh dwarfSummary) string {
	switch {
	case s.key != fresh.key:
		return fmt.Sprintf("kernel %s, where the input gives %s", s.key, fresh.key)
	case s.vmlinux != fresh.vmlinux:
		return "other vmlinux types than pahole makes"
	case len(s.modules) != len(fresh.modules):
		return fmt.Sprintf("%d modules, where pahole makes %d", len(s.modules), len(fresh.modules))
	}
	for i, m := range s.modules {
		if f := fresh.modules[i]; m.name != f.name || m.member != f.member {
			return fmt.Sprintf("module %s, where pahole makes %s", m.name, f.name)
		} else if m.types != f.types {
			return fmt.Sprintf("other types for module %s than pahole makes", m.name)
		}
	}
	if !slices.Equal(s.skipped, fresh.skipped) {
		return fmt.Sprintf("%d modules refused, where pahole refuses %d", len(s.skipped), len(fresh.skipped))
	}
	return ""
}

// maxDigestDepth bounds the references followed from one type. pahole's
// chains are short (a pointer to a const typedef of an anonymous struct);
// a forged entry's longer chains hash differently, which is all they can
// do.
const maxDigestDepth = 64

// btfDigester hashes the types of one blob by content, independently of
// type IDs: a reference to a named struct, union, enum, forward
// declaration or typedef is its kind and name (which also ends every
// cycle C allows), any other reference the referred type's own hash.
// Types of the base are hashed by the base's digester.
type btfDigester struct {
	spec *rawbtf.Spec
	base *btfDigester
	seed maphash.Seed
	memo []uint64 // by ID - FirstID; 0: not computed yet
	busy []bool
}

func newBTFDigester(spec *rawbtf.Spec, base *btfDigester, seed maphash.Seed) *btfDigester {
	n := int(spec.NextID() - spec.FirstID())
	return &btfDigester{spec: spec, base: base, seed: seed, memo: make([]uint64, n), busy: make([]bool, n)}
}

// digest is the SHA-256 of the sorted hashes of the blob's own types,
// without FUNC records, FUNC_PROTOs (those a kept type refers to are in
// its hash) and the decl tags of FUNCs.
func (d *btfDigester) digest() [sha256.Size]byte {
	hashes := make([]uint64, 0, len(d.memo))
	for id := d.spec.FirstID(); id < d.spec.NextID(); id++ {
		t, err := d.spec.Type(id)
		if err != nil {
			continue // not for a parsed spec
		}
		switch t.Kind {
		case rawbtf.KindFunc, rawbtf.KindFuncProto:
			continue
		case rawbtf.KindDeclTag:
			if target, err := d.spec.Type(t.Ref()); err == nil && target.Kind == rawbtf.KindFunc {
				continue
			}
		}
		hashes = append(hashes, d.content(id, 0))
	}
	slices.Sort(hashes)
	h := sha256.New()
	var b [8]byte
	for _, x := range hashes {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// ref is the hash of a reference to type id.
func (d *btfDigester) ref(id rawbtf.TypeID, depth int) uint64 {
	if id == 0 {
		return 1 // void
	}
	if id < d.spec.FirstID() {
		if d.base == nil {
			return 2 // not for a parsed spec
		}
		return d.base.ref(id, depth)
	}
	t, err := d.spec.Type(id)
	if err != nil {
		return 2
	}
	switch t.Kind {
	case rawbtf.KindStruct, rawbtf.KindUnion, rawbtf.KindEnum, rawbtf.KindEnum64, rawbtf.KindFwd, rawbtf.KindTypedef:
		if t.Name != "" {
			var h maphash.Hash
			h.SetSeed(d.seed)
			h.WriteByte(byte(t.Kind))
			h.WriteString(t.Name)
			return h.Sum64() | 4 // never 0, 1 or 2
		}
	}
	return d.content(id, depth)
}

// content is the hash of type id's record, its references hashed by ref.
func (d *btfDigester) content(id rawbtf.TypeID, depth int) uint64 {
	i := id - d.spec.FirstID()
	if d.memo[i] != 0 {
		return d.memo[i]
	}
	if d.busy[i] || depth > maxDigestDepth {
		return 3 // a cycle without a name, or a chain pahole never makes
	}
	d.busy[i] = true
	defer func() { d.busy[i] = false }()
	t, _ := d.spec.Type(id)
	r := t.Record()
	var refs []rawbtf.TypeID
	r.MapRefs(func(ref rawbtf.TypeID) rawbtf.TypeID { refs = append(refs, ref); return 0 })

	var h maphash.Hash
	h.SetSeed(d.seed)
	var b []byte
	u32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	str := func(s string) { u32(uint32(len(s))); b = append(b, s...) }
	b = append(b, byte(r.Kind))
	str(r.Name)
	if r.KindFlag {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	u32(r.SizeType) // 0 where it was a reference
	b = append(b, r.Int.Encoding, r.Int.Offset, r.Int.Bits)
	u32(r.Array.Nelems)
	for _, m := range r.Members {
		str(m.Name)
		u32(m.BitOffset)
		u32(m.BitfieldSize)
	}
	for _, v := range r.Values {
		str(v.Name)
		b = binary.LittleEndian.AppendUint64(b, v.Value)
	}
	for _, p := range r.Params {
		str(p.Name)
	}
	u32(r.Linkage)
	for _, v := range r.Vars {
		u32(v.Offset)
		u32(v.Size)
	}
	u32(uint32(r.ComponentIdx))
	for _, ref := range refs {
		b = binary.LittleEndian.AppendUint64(b, d.ref(ref, depth+1))
	}
	h.Write(b)
	sum := h.Sum64() | 4
	d.memo[i] = sum
	return sum
}

package relodigest

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

// Size is the length of a Digest: 128 bits of SHA-256, against accidental
// equality, not an adversary (the objects are trusted input).
const Size = 16

// Digest is a program's CO-RE relocations, digested.
type Digest [Size]byte

// Programs returns the digest of every program of spec by name; a program
// without CO-RE relocations has the digest of none. It fails if a local
// type cannot be read, or if cilium/ebpf describes a relocation in a form
// this package does not know (a newer cilium/ebpf): then neither side can
// digest, and the generator says so before anything is embedded.
func Programs(spec *ebpf.CollectionSpec) (map[string]Digest, error) {
	// A local type's shape is digested once: the big test object's
	// 33,857 relocations name a few hundred types, some of many KB.
	shapes := map[btf.TypeID][sha256.Size]byte{}
	// A relocation of a subprogram is on the instructions of every
	// program that calls it, one *btf.CORERelocation (half of the big
	// object's), described once: String is most of the work.
	lines := map[*btf.CORERelocation]string{}
	out := make(map[string]Digest, len(spec.Programs))
	for name, prog := range spec.Programs {
		var relos []string
		for i := range prog.Instructions {
			r := btf.CORERelocationMetadata(&prog.Instructions[i])
			if r == nil {
				continue
			}
			if line, ok := lines[r]; ok {
				relos = append(relos, line)
				continue
			}
			kind, access, id, err := parse(r.String())
			if err != nil {
				return nil, fmt.Errorf("program %s: %w", name, err)
			}
			shape, ok := shapes[id]
			if !ok {
				if spec.Types == nil {
					return nil, fmt.Errorf("program %s: CO-RE relocations without BTF", name)
				}
				raw, err := TypeShape(spec.Types, id)
				if err != nil {
					return nil, fmt.Errorf("program %s: local type %d: %w", name, id, err)
				}
				shape = sha256.Sum256([]byte(raw))
				shapes[id] = shape
			}
			line := kind + "\x00" + access + "\x00" + string(shape[:])
			lines[r] = line
			relos = append(relos, line)
		}
		slices.Sort(relos)
		h := sha256.New()
		var n [binary.MaxVarintLen64]byte
		for _, r := range relos {
			h.Write(n[:binary.PutUvarint(n[:], uint64(len(r)))])
			h.Write([]byte(r))
		}
		var d Digest
		copy(d[:], h.Sum(nil))
		out[name] = d
	}
	return out, nil
}

// parse reads the kind, access string and local type ID out of a
// relocation as cilium/ebpf (v0.22) prints it,
// `CORERelocation(byte_off, Struct:"task_struct"[0:1], local_id=25)`: its
// fields are unexported, and String is all it gives of them. The type's
// name may hold anything, so the access string is the last bracketed part
// before local_id, which is all digits and colons.
func parse(s string) (kind, access string, id btf.TypeID, err error) {
	bad := func() (string, string, btf.TypeID, error) {
		return "", "", 0, fmt.Errorf("cilium/ebpf describes a CO-RE relocation as %q, which btfembed does not read", s)
	}
	rest, ok := strings.CutPrefix(s, "CORERelocation(")
	if !ok {
		return bad()
	}
	rest, ok = strings.CutSuffix(rest, ")")
	if !ok {
		return bad()
	}
	kind, rest, ok = strings.Cut(rest, ", ")
	i := strings.LastIndex(rest, "], local_id=")
	if !ok || kind == "" || i < 0 {
		return bad()
	}
	n, err := strconv.ParseUint(rest[i+len("], local_id="):], 10, 32)
	j := strings.LastIndexByte(rest[:i], '[')
	if err != nil || j < 0 {
		return bad()
	}
	access = rest[j+1 : i]
	if access == "" || strings.Trim(access, "0123456789:") != "" {
		return bad()
	}
	return kind, access, btf.TypeID(n), nil
}

// TypeShape is a local type as BTF on its own: the type and every type it
// refers to, numbered from 1 in the order reached, so that equal types in
// different objects, or at different IDs, have equal shapes. The
// generator's cache groups relocations by it too.
func TypeShape(local *btf.Spec, id btf.TypeID) (string, error) {
	typ, err := local.TypeByID(id)
	if err != nil {
		return "", err
	}
	var b btf.Builder
	if _, err := b.Add(typ); err != nil {
		return "", err
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		return "", err
	}
	return string(raw), nil
}

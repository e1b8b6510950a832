package payload

import (
	"encoding/binary"
	"unsafe"

	"github.com/btfembed/btfembed/internal/relodigest"
)

// The objects section (format 5) records what the payload was generated
// for, so that the runtime refuses a collection of other objects: every
// object the payload's BTF was minimized for, with each of its programs'
// relocation digest (package relodigest).
//
//	uv count, then per object:      str name, uv count (>= 1), then per
//	                                program: str name, [16]byte digest
//
// Objects are sorted by name and programs by name, each name once, every
// name ValidName.

// ObjectRecordDigests is an object the payload was generated for: its
// name, as the verdicts name it (the file's base name), and its programs.
type ObjectRecordDigests struct {
	Name     string
	Programs []ProgramDigest
}

// ProgramDigest is a program and the digest of its CO-RE relocations.
type ProgramDigest struct {
	Name   string
	Digest relodigest.Digest
}

// marshalObjects encodes the section, nil when there is no object.
func marshalObjects(objects []ObjectRecordDigests) []byte {
	if len(objects) == 0 {
		return nil
	}
	u := func(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
	s := func(b []byte, v string) []byte { return append(u(b, uint64(len(v))), v...) }
	b := u(nil, uint64(len(objects)))
	for _, o := range objects {
		b = s(b, o.Name)
		b = u(b, uint64(len(o.Programs)))
		for _, p := range o.Programs {
			b = s(b, p.Name)
			b = append(b, p.Digest[:]...)
		}
	}
	return b
}

// readObjects decodes and validates an objects section, charging bud for
// its records (the caller has charged the copy of raw). On error it has
// given back what it charged.
func readObjects(raw []byte, bud *Budget) ([]ObjectRecordDigests, error) {
	r := newReader(raw, "objects", bud)
	objects := make([]ObjectRecordDigests, r.alloc(r.count("objects", 2), unsafe.Sizeof(ObjectRecordDigests{}), "objects"))
	for i := range objects {
		o := &objects[i]
		o.Name = r.str("object name")
		o.Programs = make([]ProgramDigest, r.alloc(r.count("programs", 1+relodigest.Size), unsafe.Sizeof(ProgramDigest{}), "programs"))
		for j := range o.Programs {
			p := &o.Programs[j]
			p.Name = r.str("program name")
			if r.err == nil && len(r.b) < relodigest.Size {
				r.fail("program %q: digest truncated", p.Name)
			}
			if r.err != nil {
				break
			}
			copy(p.Digest[:], r.b)
			r.b = r.b[relodigest.Size:]
			if !ValidName(p.Name) || j > 0 && o.Programs[j-1].Name >= p.Name {
				r.fail("object %q: empty, unprintable or unsorted program name %q", o.Name, p.Name)
			}
		}
		if r.err == nil && (!ValidName(o.Name) || len(o.Programs) == 0 || i > 0 && objects[i-1].Name >= o.Name) {
			r.fail("object %d: no name, an unprintable or unsorted one (%q), or no program", i, o.Name)
		}
	}
	if r.err == nil && len(objects) == 0 {
		r.fail("no object") // none, no section
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	if err := r.failed(); err != nil {
		return nil, err
	}
	return objects, nil
}

// Objects returns the objects the payload was generated for, sorted by
// name, decoding the section once per payload and charging bud the first
// time; none for a payload of format 4, which did not record them, or one
// without kernels. A corrupt section gives an error wrapping ErrCorrupt.
// The result is shared: callers must not modify it.
func (p *Payload) Objects(bud *Budget) ([]ObjectRecordDigests, error) {
	return section(p, &p.objects, p.dir.objects, "objects", bud, readObjects)
}

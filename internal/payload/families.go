package payload

import (
	"encoding/binary"
	"unsafe"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// The families section (format 5) lists the kernel families
// (kernelkey.Family) whose embedded members all give the payload's objects
// the same CO-RE fixups, as the generator found with cilium/ebpf on each
// member's BTF. The runtime, asked to, serves a kernel of such a family
// that the payload does not embed with a member's BTF.
//
//	uv count, then per family:      str arch, str distro, str version,
//	                                str series, str flavour, uv count
//	                                (>= 2), then the members' ABI
//	                                numbers, increasing: the first, then
//	                                each as its distance to the previous
//	                                minus one
//
// Families are sorted by kernelkey.Family.Compare, each once, and valid
// (kernelkey.Family.Valid). Each member, the family's Key of its ABI
// number, is an entry of the payload.

// FamilyRecord is a family stable for the payload's objects and the ABI
// numbers of its embedded members.
type FamilyRecord struct {
	Family kernelkey.Family
	ABIs   []uint64
}

// marshalFamilies encodes the section, nil when there is no family.
func marshalFamilies(families []FamilyRecord) []byte {
	if len(families) == 0 {
		return nil
	}
	u := func(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
	s := func(b []byte, v string) []byte { return append(u(b, uint64(len(v))), v...) }
	b := u(nil, uint64(len(families)))
	for _, f := range families {
		for _, v := range []string{f.Family.Arch, f.Family.Distro, f.Family.Version, f.Family.Series, f.Family.Flavour} {
			b = s(b, v)
		}
		b = u(b, uint64(len(f.ABIs)))
		for i, abi := range f.ABIs {
			if i > 0 {
				abi -= f.ABIs[i-1] + 1
			}
			b = u(b, abi)
		}
	}
	return b
}

// readFamilies decodes and validates a families section, charging bud for
// its records (the caller has charged the copy of raw). On error it has
// given back what it charged.
func readFamilies(raw []byte, bud *Budget) ([]FamilyRecord, error) {
	r := newReader(raw, "families", bud)
	families := make([]FamilyRecord, r.alloc(r.count("families", 8), unsafe.Sizeof(FamilyRecord{}), "families"))
	for i := range families {
		f := &families[i]
		f.Family = kernelkey.Family{Arch: r.str("arch"), Distro: r.str("distro"), Version: r.str("version"), Series: r.str("series"), Flavour: r.str("flavour")}
		f.ABIs = make([]uint64, r.alloc(r.count("members", 1), 8, "members"))
		for j := range f.ABIs {
			d := r.uv("member")
			if j > 0 {
				prev := f.ABIs[j-1]
				if r.err == nil && d >= ^uint64(0)-prev {
					r.fail("family %s: member ABI out of range", f.Family)
				}
				d += prev + 1
			}
			f.ABIs[j] = d
		}
		if r.err == nil && (!f.Family.Valid() || len(f.ABIs) < 2 || i > 0 && families[i-1].Family.Compare(f.Family) >= 0) {
			r.fail("family %d (%s): invalid, unsorted, or of fewer than 2 members", i, f.Family)
		}
	}
	if r.err == nil && len(families) == 0 {
		r.fail("no family") // none, no section
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	if err := r.failed(); err != nil {
		return nil, err
	}
	return families, nil
}

// Families returns the families stable for the payload's objects, sorted,
// decoding the section once per payload and charging bud the first time;
// none for a payload of format 4 or one where no family is. A corrupt
// section gives an error wrapping ErrCorrupt. The result is shared:
// callers must not modify it.
func (p *Payload) Families(bud *Budget) ([]FamilyRecord, error) {
	return section(p, &p.families, p.dir.families, "families", bud, readFamilies)
}

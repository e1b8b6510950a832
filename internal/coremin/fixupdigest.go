package coremin

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"

	"github.com/cilium/ebpf/btf"
)

// FixupDigest digests the fixups of every program of the oracle's objects
// against a's BTF, compared as Verify compares them: each fixup by
// cilium/ebpf's description, a target_type_id fixup's target by kind and
// name, and a program btf.CORERelocate refuses as refused (its error
// names type IDs, which differ between a kernel's full and minimized
// BTF). Since the oracle proves a kernel's minimized BTF gives the fixups
// of its full BTF, the digest is the same against either, and two kernels
// with one digest relocate the objects alike: the generator compares the
// members of a kernel family with it. It is 32 hex digits.
func (a *Answers) FixupDigest() string {
	d := &fixupDigest{h: sha256.New(), described: map[btf.COREFixup]string{}}
	for i := range a.oracle.objs {
		d.line("object", strconv.Itoa(i))
		for k := range a.oracle.progs[i] {
			p := &a.oracle.progs[i][k]
			d.line("program", p.name)
			fixups, err := a.list(i, p)
			if err != nil {
				d.line("refused", "")
				continue
			}
			for j := range fixups.len() {
				f := fixups.at(j)
				// The big test object's 67,194 fixups per kernel take
				// a few hundred values: each described once.
				s, ok := d.described[f]
				if !ok {
					s = a.fixup(f)
					d.described[f] = s
				}
				d.line(strconv.Itoa(p.insns[j]), s)
			}
		}
	}
	return hex.EncodeToString(d.h.Sum(nil)[:16])
}

type fixupDigest struct {
	h         hash.Hash
	described map[btf.COREFixup]string
	buf       []byte
}

// line hashes "key value\n".
func (d *fixupDigest) line(key, value string) {
	d.buf = append(append(append(append(d.buf[:0], key...), ' '), value...), '\n')
	d.h.Write(d.buf)
}

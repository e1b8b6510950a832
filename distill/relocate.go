package distill

import (
	"errors"

	"github.com/btfembed/btfembed/internal/btfrelocate"
)

// Base is standalone base BTF, usually a kernel's vmlinux BTF, indexed
// once (one pass over its type offsets and names, no decoding of types)
// for any number of Distill and Relocate calls, from
// several goroutines.
type Base struct {
	b *btfrelocate.Base
}

// NewBase parses raw standalone BTF, such as /sys/kernel/btf/vmlinux. raw
// must not be modified while the Base is in use.
func NewBase(raw []byte) (*Base, error) {
	b, err := btfrelocate.NewBase(raw)
	if err != nil {
		return nil, err
	}
	return &Base{b: b}, nil
}

// RelocateOptions tunes Relocate. The zero value, like a nil pointer, is
// libbpf's strict rules.
type RelocateOptions struct {
	// LayoutCompatible also accepts a new-base type that differs from the
	// distilled description in ways that cannot move or resize anything in
	// the split's own types: an INT of the same size with another
	// encoding (the signedness of char, which Linux 6.2 changed; a bool),
	// and, for a composite the split only points to, another size or a
	// forward declaration. Types the split embeds must still have their
	// size, and every type must still be found by kind and name.
	LayoutCompatible bool
}

func (o *RelocateOptions) internal() *btfrelocate.Options {
	if o == nil {
		return nil
	}
	return &btfrelocate.Options{LayoutCompatible: o.LayoutCompatible}
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
// ID and refer to newBase's types: cilium/ebpf's btf.LoadSplitSpecFromReader
// loads the result over newBase's bytes, which is what
// ebpf.CollectionOptions' Programs.ExtraRelocationTargets takes. The
// relocation itself lives in an internal package that the runtime shares.
func Relocate(split, distilledBase []byte, newBase *Base, opts *RelocateOptions) ([]byte, error) {
	out, err := btfrelocate.Relocate(split, distilledBase, newBase.b, opts.internal())
	return out, publicError(err)
}

// publicError turns the relocation's *btfrelocate.UnmappedError into this
// package's *UnmappedError, which callers match with errors.As.
func publicError(err error) error {
	var ue *btfrelocate.UnmappedError
	if !errors.As(err, &ue) {
		return err
	}
	return &UnmappedError{err: ue}
}

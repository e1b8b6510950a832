package distill

import "github.com/btfembed/btfembed/internal/btfdistill"

// Distill separates split BTF from the base it was built over. It returns
// a distilled base, a standalone blob that names each base type the split
// refers to, and the split BTF rewritten over that distilled base. The
// split's own types keep their order and come first; base types that
// cannot be matched by name later are copied to the end of the new split.
//
// What goes where follows libbpf's btf__distill_base with the review
// fixes of its v3 patch: named INT, FLOAT, FWD, STRUCT, UNION, ENUM and
// ENUM64 types go to the distilled base (composites without members, with
// their size where the split embeds them or the name is ambiguous; enums
// without values, with their size and signedness); everything else the
// split reaches goes to the new split. docs/distill.md has the details. A
// reference from the split to a base type of another kind (FUNC, VAR,
// DATASEC, DECL_TAG) is an error naming every such type, and so is BTF
// that is not split BTF.
//
// split is the module's raw split BTF over base.
func Distill(split []byte, base *Base) (distilledBase, newSplit []byte, err error) {
	return btfdistill.Distill(split, base.b)
}

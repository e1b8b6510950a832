package runtime

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/safetext"
)

// FamilySelection says why the running kernel, which the payload does not
// embed, is served with the BTF of another build of its family
// (SourceFamily).
//
// A family (Family) is a distribution release's builds of one
// kernel series and flavour, told apart by an ABI number that each patch
// release bumps: Debian 12's 6.1.0-47-amd64, 6.1.0-50-amd64, ... The
// generator compared the fixups that cilium/ebpf gives every CO-RE
// relocation of the payload's objects on each embedded member of the
// family, and found them all the same: the family is stable for these
// objects. What is assumed is that the running build, which the
// generator never saw, gives them those fixups too: that the types and
// members the objects read are where they were in every member. Nothing
// checks that on the running kernel. Where it does not hold, CO-RE
// relocates against the wrong layout: loads fail or, worse, programs read
// the wrong fields. That is why the caller must ask for it
// (SelectOptions.AllowFamily) and the Selection says so.
//
// The member used is the nearest older build, or, for a kernel older
// than every member, the oldest. Its load predictions are the selection's
// (Predicted) only if every member has the same; otherwise nothing is
// predicted, as for the kernel's own BTF.
type FamilySelection struct {
	// Family is the running kernel's family.
	Family Family
	// Kernel is the running kernel; Selection.Key is the member whose BTF
	// serves it.
	Kernel Key
	// Members are the family's embedded builds, by ABI number.
	Members []Key
	// Reason says all this in a sentence, for the agent's log.
	Reason string
}

// findFamily returns the payload's record of the running kernel's family
// own: the one of own's distribution and version, else, for each of
// os-release's ID_LIKE in turn, the one family of own's arch, series and
// flavour that distribution has, if it has exactly one (Linux Mint
// 21.3, ID_LIKE ubuntu, runs Ubuntu 22.04's 5.15.0-*-generic: it says
// VERSION_ID 21.3, which no Ubuntu family carries). like says the
// record came from ID_LIKE.
func findFamily(families []payload.FamilyRecord, own kernelkey.Family, idLike []string) (rec payload.FamilyRecord, like, ok bool) {
	i := sort.Search(len(families), func(i int) bool { return families[i].Family.Compare(own) >= 0 })
	if i < len(families) && families[i].Family == own {
		return families[i], false, true
	}
	for _, id := range idLike {
		var found []payload.FamilyRecord
		for _, f := range families {
			if sameID(f.Family.Distro, id) && f.Family.Arch == own.Arch && f.Family.Series == own.Series && f.Family.Flavour == own.Flavour {
				found = append(found, f)
			}
		}
		if len(found) == 1 {
			return found[0], true, true
		}
		if len(found) > 1 {
			return payload.FamilyRecord{}, false, false // several versions: nothing tells which
		}
	}
	return payload.FamilyRecord{}, false, false
}

// familySelection is Select's answer for a kernel whose release the
// payload does not embed at all (notFound, the error for that): the BTF
// of a member of the kernel's family when the payload records the family
// as stable, and allow says the caller accepts it. Where the family would
// serve but allow is false, notFound is wrapped with that. Otherwise it
// returns notFound.
func (a *Assets) familySelection(h host, allow bool, notFound error) (*Selection, error) {
	own, abi, ok := kernelkey.FamilyOf(h.key)
	if !ok {
		return nil, notFound
	}
	families, err := a.p.Families(a.bud)
	if err != nil {
		return nil, err
	}
	rec, like, ok := findFamily(families, own, h.idLike)
	if !ok {
		return nil, notFound
	}
	family := rec.Family
	members := make([]Key, len(rec.ABIs))
	names := make([]string, len(rec.ABIs))
	use := 0 // the oldest, unless a member is older than the kernel
	for j, m := range rec.ABIs {
		members[j] = family.Key(m)
		names[j] = members[j].Release
		if m < abi {
			use = j
		}
	}
	why := fmt.Sprintf("%s is not embedded; the %d embedded builds of its family %s (%s) give the objects' CO-RE relocations the same fixups",
		h.key.Release, len(members), family, strings.Join(names, ", "))
	if like {
		why = fmt.Sprintf("%s (os-release: %s %s is like %s, whose only family of this series is that)", why, safetext.Escape(h.key.Distro), safetext.Escape(h.key.Version), safetext.Escape(family.Distro))
	}
	if !allow {
		return nil, fmt.Errorf("%w; but %s, so SelectOptions.AllowFamily would use %s's BTF", notFound, why, names[use])
	}
	var entries []payload.Entry
	for _, k := range members {
		e, ok, err := a.p.Find(k, a.bud)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: family %s: member %s is not embedded", ErrCorrupt, family, k)
		}
		entries = append(entries, e)
	}
	sel, err := a.selection(a.entry(entries[use]))
	if err != nil {
		return nil, err
	}
	why += fmt.Sprintf(", so %s's BTF is used, assuming this build relocates them as they all do", names[use])
	if slices.ContainsFunc(entries, func(e payload.Entry) bool { return e.Verdicts != entries[use].Verdicts }) {
		// Verdict sets are stored once each: another number, other
		// verdicts.
		sel.Predicted, sel.PredictionsFrom, sel.Predictions, sel.objects = false, Key{}, nil, nil
		why += "; their load predictions differ, so none is made"
	}
	sel.Source = SourceFamily
	sel.Family = &FamilySelection{Family: family, Kernel: h.key, Members: members, Reason: why}
	return sel, nil
}

package generator

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// FamilyReport is a kernel family of the run (runtime.Family: a
// distribution release's builds of one series and flavour, told apart by
// their ABI number, "debian 12 x86_64 6.1.0-*-amd64") and whether it is
// stable for the objects.
//
// A distribution publishes a patch release every few weeks, so an agent
// meets builds of a family that its payload, made earlier, does not
// embed. A stable family is one whose embedded members all give the
// objects' CO-RE relocations the same fixups (cilium/ebpf's, compared as
// the oracle compares them: KernelReport.Fixups). The payload records the
// stable families, and the runtime, where the caller allows it
// (SelectOptions.AllowFamily), serves a build of one that is not embedded
// with a member's BTF, on the assumption that it relocates the objects
// as its family's members all do.
type FamilyReport struct {
	// Family spells the family with its releases as a pattern.
	Family  string `json:"family"`
	Arch    string `json:"arch"`
	Distro  string `json:"distro"`
	Version string `json:"version"`
	Series  string `json:"series"`
	Flavour string `json:"flavour"`
	// Members are the family's releases the run embedded, by ABI number.
	Members []string `json:"members"`
	// Stable says the members are two or more and all relocate the
	// objects alike; Why says why the family is not stable otherwise.
	Stable bool   `json:"stable"`
	Why    string `json:"why,omitempty"`

	family kernelkey.Family
	abis   []uint64 // the members'
}

// families groups the kernels into their families, sorted, and tells
// which are stable. Kernels whose release is of no family (RHEL's,
// Debian's backports) or whose distribution is unknown are in none.
func families(kernels []KernelReport) []FamilyReport {
	type member struct {
		abi    uint64
		k      *KernelReport
		family kernelkey.Family
	}
	var members []member
	for i := range kernels {
		k := &kernels[i]
		f, abi, ok := kernelkey.FamilyOf(kernelkey.Key{Arch: k.Arch, Release: k.Release, Distro: k.Distro, Version: k.Version})
		if ok {
			members = append(members, member{abi, k, f})
		}
	}
	slices.SortFunc(members, func(a, b member) int { return cmp.Or(a.family.Compare(b.family), cmp.Compare(a.abi, b.abi)) })
	var out []FamilyReport
	for lo := 0; lo < len(members); {
		f := members[lo].family
		hi := lo
		for hi < len(members) && members[hi].family == f {
			hi++
		}
		group := members[lo:hi]
		lo = hi
		r := FamilyReport{
			Family: f.String(), Arch: f.Arch, Distro: f.Distro, Version: f.Version, Series: f.Series, Flavour: f.Flavour,
			family: f, Stable: len(group) > 1,
		}
		for _, m := range group {
			r.Members = append(r.Members, m.k.Release)
			r.abis = append(r.abis, m.abi)
		}
		first := group[0].k
		switch {
		case len(group) == 1:
			r.Why = "one member: nothing to compare it with"
		case first.Fixups == "":
			r.Stable, r.Why = false, fmt.Sprintf("the fixups on %s are not known", first.Release)
		default:
			for _, m := range group[1:] {
				if m.k.Fixups != first.Fixups {
					r.Stable = false
					r.Why = fmt.Sprintf("%s relocates the objects otherwise than %s", m.k.Release, first.Release)
					break
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// writeFamilies writes the families of two or more members, stable or
// not: families of one member, the usual BTFHub corpus, say nothing.
func (r *Report) writeFamilies(w io.Writer) {
	var lines []string
	for _, f := range r.Families {
		if len(f.Members) < 2 {
			continue
		}
		state := "stable over " + esc(strings.Join(f.Members, ", "))
		if !f.Stable {
			state = "not stable: " + esc(f.Why)
		}
		lines = append(lines, fmt.Sprintf("  %s: %s", f.Family, state))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nKernel families (a release of a stable family that is not embedded may use a member's BTF, with btfruntime.SelectOptions.AllowFamily):")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

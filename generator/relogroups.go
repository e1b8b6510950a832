package generator

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/relodigest"
)

// relocationSet is some objects' relocations as minimization, the oracle
// and the load prediction depend on them: groups, each described by its
// content (the local type's BTF shape, not its ID, and the distinct
// access strings and kinds), never by the object holding it.
//
// Two groupings count. Match picks one candidate per function and local
// type (coremin's score), and what minimization keeps follows from
// those picks. cilium/ebpf, in the oracle and the load prediction, picks
// one per program and local type (btf.CORERelocate's coreCalculateFixups).
// A group's outcome on a kernel depends on nothing else, so objects whose
// groups are all among those of a set minimize to the same blobs and
// relocate to the same fixups, and their digest is the set's.
type relocationSet struct {
	digest []byte
	// outcome[i][j] names, in a cached result, the outcome of the
	// relocation at site o.relos[i].Sites[j]: its Match group, access,
	// kind.
	// function[i][j] names its function by every relocation's outcome
	// name in order: Match fails a whole function when one of its groups
	// fails, so such a function's outcomes are cached under this name.
	outcome, function [][]string
	// groups[i][program] are a program's cilium/ebpf groups in local type
	// ID order; program[i][program] names the list: the errors of a
	// program btf.CORERelocate refuses depend on it, in that order.
	groups  []map[string][]string
	program []map[string]string
	// typeID[i][program][insn] names the kernel type ID of a
	// target_type_id relocation: its cilium/ebpf group and access.
	typeID []map[string]map[int]string
}

// newRelocationSet describes the relocations of o.
func newRelocationSet(o *objects) (*relocationSet, error) {
	n := len(o.relos)
	s := &relocationSet{
		outcome: make([][]string, n), function: make([][]string, n),
		groups: make([]map[string][]string, n), program: make([]map[string]string, n),
		typeID: make([]map[string]map[int]string, n),
	}
	all := map[string]bool{}
	for i, obj := range o.relos {
		local := o.colls[i].Types
		shapes := map[btf.TypeID]string{}
		shape := func(id btf.TypeID) (string, error) {
			if d, ok := shapes[id]; ok {
				return d, nil
			}
			d, err := relodigest.TypeShape(local, id)
			if err != nil {
				return "", fmt.Errorf("%s: local type %d: %w", o.names[i], id, err)
			}
			shapes[id] = d
			return d, nil
		}

		// Match's groups: function and local type.
		type fn struct {
			section, program string
			typ              btf.TypeID
		}
		member := make([]string, len(obj.Relocations)) // access and kind
		for k, r := range obj.Relocations {
			member[k] = r.Access + "\x00" + r.Kind.String()
		}
		group := func(site coremin.Site) fn {
			f := obj.Functions[site.Function]
			return fn{f.Section, f.Name, obj.Relocations[site.Relocation].TypeID}
		}
		members := map[fn][]string{}
		unnamed := map[fn]bool{}
		for _, site := range obj.Sites {
			g := group(site)
			members[g] = append(members[g], member[site.Relocation])
			unnamed[g] = obj.Relocations[site.Relocation].TypeName == ""
		}
		digests := map[fn]string{}
		for g, m := range members {
			sh, err := shape(g.typ)
			if err != nil {
				return nil, err
			}
			if unnamed[g] {
				// Match's error for an anonymous local type names its ID.
				sh += fmt.Sprintf("\x00id %d", g.typ)
			}
			d := groupDigest("match", obj.ByteOrder.String(), sh, m, true)
			digests[g] = d
			all[d] = true
		}
		s.outcome[i] = make([]string, len(obj.Sites))
		byFunction := make([][]string, len(obj.Functions))
		for j, site := range obj.Sites {
			s.outcome[i][j] = digests[group(site)] + "\x00" + member[site.Relocation]
			byFunction[site.Function] = append(byFunction[site.Function], s.outcome[i][j])
		}
		functions := make([]string, len(obj.Functions))
		for f, outs := range byFunction {
			functions[f] = groupDigest("function", obj.Functions[f].Section, obj.Functions[f].Name, outs, false)
		}
		s.function[i] = make([]string, len(obj.Sites))
		for j, site := range obj.Sites {
			s.function[i][j] = functions[site.Function]
		}

		// cilium/ebpf's groups: program and local type.
		s.typeID[i], s.groups[i], s.program[i] = map[string]map[int]string{}, map[string][]string{}, map[string]string{}
		for name, prog := range o.colls[i].Programs {
			sites, err := obj.ProgramRelocations(prog)
			if err != nil {
				return nil, err
			}
			byType := map[btf.TypeID][]coremin.ProgramRelocation{}
			for _, r := range sites {
				byType[r.TypeID] = append(byType[r.TypeID], r)
			}
			order := "native"
			if prog.ByteOrder != nil {
				order = prog.ByteOrder.String()
			}
			for _, id := range slices.Sorted(maps.Keys(byType)) {
				rs := byType[id]
				sh, err := shape(id)
				if err != nil {
					return nil, err
				}
				var m []string
				for _, r := range rs {
					m = append(m, r.Access+"\x00"+r.Kind.String())
				}
				d := groupDigest("cilium", order, sh, m, true)
				all[d] = true
				s.groups[i][name] = append(s.groups[i][name], d)
				for _, r := range rs {
					if r.Kind != coremin.TypeIDTarget {
						continue
					}
					if s.typeID[i][name] == nil {
						s.typeID[i][name] = map[int]string{}
					}
					s.typeID[i][name][r.Index] = d + "\x00" + r.Access
				}
			}
			s.program[i][name] = groupDigest("program", order, "", s.groups[i][name], false)
		}
	}
	parts := [][]byte{[]byte("relocation groups")}
	for _, d := range slices.Sorted(maps.Keys(all)) {
		parts = append(parts, []byte(d))
	}
	k := cache.NewKey(parts...)
	s.digest = k[:]
	return s, nil
}

// groupDigest describes a group by its content: who groups (what),
// the byte order, the local type's shape and its members, as a multiset
// (unordered: sorted, repeats kept) or as a list. Repeats count: both
// coremin's Match and cilium/ebpf score a candidate by how many of a
// group's relocations it misses, so A×3 + B and A + B×3 can choose
// different candidates on the same kernel and must not share a cached
// outcome.
func groupDigest(what, order, shape string, members []string, unordered bool) string {
	if unordered {
		members = slices.Sorted(slices.Values(members))
	}
	return cache.NewKey([]byte(what), []byte(order), []byte(shape), []byte(strings.Join(members, "\x01"))).String()
}

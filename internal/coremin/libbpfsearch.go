package coremin

// libbpfSpecMaxLen is libbpf's BPF_CORE_SPEC_MAX_LEN: a target access
// spec holds at most 64 raw indices (the first array index, one per
// anonymous member passed, one per named member and array index). libbpf
// refuses a relocation whose target spec would be longer (-E2BIG).
const libbpfSpecMaxLen = 64

// libbpfFindMember logs what libbpf's search for member name in composite
// typ depends on, so a minimized BTF leads libbpf where the full one does:
// libbpf (bpf_core_match_member) searches depth first, in member order,
// descending into anonymous composites, and gives up with -E2BIG when the
// spec reaches libbpfSpecMaxLen entries. cilium/ebpf searches breadth
// first with another limit (findMember), so the two may stop on different
// members or for different reasons; keeping the path each one takes keeps
// both decisions. rawLen is the length of the target spec so far; the
// result is its length after the member, libbpfSpecMaxLen if libbpf gives
// up, or rawLen if libbpf finds no member of that name.
func (w *walker) libbpfFindMember(typ node, name string, rawLen int) int {
	// path holds the anonymous members entered, outermost first.
	type step struct {
		comp node
		idx  int
	}
	var path []step
	// A composite searched at some spec length without result gives
	// none again: remembering it bounds the search by types × lengths
	// where BTF shares anonymous composites (libbpf would search them
	// again, taking exponential time on hostile BTF).
	type state struct {
		k      key
		rawLen int
	}
	var fruitless map[state]bool // made on first use: most searches need none
	logPath := func() {
		for _, s := range path {
			w.touchMember(s.comp, s.idx)
			w.logAnonPath(s.comp, s.idx)
		}
	}
	var search func(comp node, rawLen int) (int, bool)
	search = func(comp node, rawLen int) (int, bool) {
		st := state{w.key(comp), rawLen}
		if fruitless[st] {
			return rawLen, false
		}
		for j := range comp.Vlen {
			if rawLen == libbpfSpecMaxLen {
				// libbpf gives up before looking at member j: keep
				// the chain down to it.
				logPath()
				w.touchMember(comp, j)
				return libbpfSpecMaxLen, true
			}
			m := comp.Member(j)
			if m.Name == name {
				logPath()
				w.touchMember(comp, j)
				return rawLen + 1, true
			}
			if m.Name != "" {
				continue
			}
			mark := len(w.log)
			mt, err := w.typ(comp.side, m.Type)
			if err != nil {
				return rawLen, false
			}
			inner, ok := w.as(mt, isComposite)
			if ok {
				path = append(path, step{comp, j})
				if n, done := search(inner, rawLen+1); done {
					return n, true
				}
				path = path[:len(path)-1]
			}
			// libbpf skips anonymous non-composites, and a branch
			// without the member decides nothing.
			w.log = w.log[:mark]
		}
		if fruitless == nil {
			fruitless = make(map[state]bool)
		}
		fruitless[st] = true
		return rawLen, false
	}
	if rawLen >= libbpfSpecMaxLen {
		return rawLen // libbpf gave up before this member
	}
	n, _ := search(typ, rawLen)
	return n
}

package generator

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/bpfobj"
	"github.com/btfembed/btfembed/internal/kernelarch"
	"github.com/btfembed/btfembed/internal/kernelkey"
)

// An object is checked, and embedded for, only the kernels it can run on.
// bpf2go compiles one object per target and says which in the file name,
// <stem>_<linux arch>_<bpfel|bpfeb>.o for an architecture-specific target
// (-target amd64 writes bpf_x86_bpfel.o with __TARGET_ARCH_x86 defined) and
// <stem>_<bpfel|bpfeb>.o for generic BPF (-target bpfel). The object's
// contents do not say which __TARGET_ARCH_* it was compiled with (the macro
// only changes which pt_regs members bpf_tracing.h reads), only its byte
// order, so the pairing rules are:
//
//   - a name with a bpf2go architecture (x86, arm64, ...) pairs with the
//     kernels of that architecture and the object's byte order, and is an
//     error where btfembed knows no such kernels (mips);
//   - any other object pairs with every kernel of its byte order.
//
// The byte order always comes from the ELF header, and a name that claims
// the other one is an error.

// bpf2goArches maps bpf2go's Linux architecture names (the x86 of
// bpf_x86_bpfel.o, its __TARGET_ARCH_* suffixes) to the GOARCHes whose
// target compiles for them; the kernel architectures they pair with are
// those GOARCHes in the kernelkey.NormalizeArch spelling. It is bpf2go's
// own target table (gen.TargetsByGoArch of cilium/ebpf's cmd/bpf2go/gen,
// without its generic targets), kept here as a constant because importing
// gen links bpf2go's code generator and its template into btfembed for
// one map; TestBpf2goArches fails when the two differ.
var bpf2goArches = map[string][]string{
	"arm":       {"arm"},
	"arm64":     {"arm64"},
	"loongarch": {"loong64"},
	"mips":      {"mips"},
	"powerpc":   {"ppc64", "ppc64le"},
	"riscv":     {"riscv64"},
	"s390":      {"s390x"},
	"x86":       {"386", "amd64"},
}

// pairing is the set of kernel architectures one object pairs with.
type pairing struct {
	bigEndian bool
	// arches is nil for generic BPF: every kernel of the byte order.
	arches []string
}

func (p pairing) accepts(kernelArch string) bool {
	if p.arches != nil {
		return slices.Contains(p.arches, kernelArch)
	}
	order, ok := kernelarch.ByteOrder(kernelArch)
	return ok && (order == binary.BigEndian) == p.bigEndian
}

// String says what the pairing is, for the report and errors.
func (p pairing) String() string {
	if p.arches != nil {
		return strings.Join(p.arches, ",")
	}
	if p.bigEndian {
		return "big-endian kernels"
	}
	return "little-endian kernels"
}

// pairObject decides the kernels an object pairs with, from its ELF
// header and its bpf2go file name.
func pairObject(path string, header []byte) (pairing, error) {
	order, err := bpfobj.ByteOrder(path, header)
	if err != nil {
		return pairing{}, err
	}
	p := pairing{bigEndian: order == binary.BigEndian}
	stem := strings.TrimSuffix(filepath.Base(path), ".o")
	var endian string
	for _, e := range []string{"bpfel", "bpfeb"} {
		if strings.HasSuffix(stem, "_"+e) {
			endian, stem = e, strings.TrimSuffix(stem, "_"+e)
		}
	}
	if endian == "" {
		return p, nil // not named by bpf2go: the byte order alone decides
	}
	if (endian == "bpfeb") != p.bigEndian {
		return pairing{}, fmt.Errorf("%s: named %s but its ELF header says %s", path, endian, order)
	}
	i := strings.LastIndexByte(stem, '_')
	if i < 0 {
		return p, nil
	}
	linux := stem[i+1:]
	goarches, ok := bpf2goArches[linux]
	if !ok {
		return p, nil // <stem>_bpfel.o: generic BPF
	}
	var known, arches []string
	for _, goarch := range goarches { // p pairs by byte order alone so far
		if a, ok := kernelkey.NormalizeArch(goarch); ok {
			known = append(known, a)
			if p.accepts(a) {
				arches = append(arches, a)
			}
		}
	}
	if len(known) == 0 {
		return pairing{}, fmt.Errorf("%s: btfembed knows no kernels of bpf2go architecture %s (it knows %s)", path, linux, strings.Join(kernelarch.Arches(), ", "))
	}
	if len(arches) == 0 {
		return pairing{}, fmt.Errorf("%s: bpf2go architecture %s is never %s", path, linux, endian)
	}
	slices.Sort(arches)
	p.arches = arches
	return p, nil
}

// archesFor lists the kernel architectures that at least one of the
// pairings accepts, in the kernelkey.NormalizeArch spelling.
func archesFor(pairings []pairing) []string {
	var arches []string
	for _, a := range kernelarch.Arches() {
		if slices.ContainsFunc(pairings, func(p pairing) bool { return p.accepts(a) }) {
			arches = append(arches, a)
		}
	}
	return arches
}

// pairAll decides from their ELF headers the kernels every object pairs
// with, narrowed by Args.ObjectArches: nothing else of the objects is
// read, so an identical rerun knows its architectures before loading
// them.
func pairAll(names []string, narrow map[string][]string) ([]pairing, error) {
	pairings := make([]pairing, len(names))
	for i, name := range names {
		header, err := bpfobj.ReadHeader(name)
		if err != nil {
			return nil, err
		}
		p, err := pairObject(name, header)
		if err != nil {
			return nil, err
		}
		if arches, ok := narrow[name]; ok {
			var keep []string
			for _, a := range arches {
				a, _ = kernelkey.NormalizeArch(a)
				if !p.accepts(a) {
					return nil, fmt.Errorf("%s pairs with %s, not with %s kernels", name, p, a)
				}
				if !slices.Contains(keep, a) {
					keep = append(keep, a)
				}
			}
			if len(keep) == 0 {
				return nil, fmt.Errorf("%s: narrowed to no kernel architecture", name)
			}
			slices.Sort(keep)
			p.arches = keep
		}
		pairings[i] = p
	}
	return pairings, nil
}

// byArch returns for each kernel architecture the objects (o, loaded, in
// the order of pairings) its kernels are checked against.
// Architectures with the same objects share one *objects.
func (o *objects) byArch(pairings []pairing) map[string]*objects {
	byArch := map[string]*objects{}
	shared := map[string]*objects{}
	for _, a := range archesFor(pairings) {
		var indices []int
		for i, p := range pairings {
			if p.accepts(a) {
				indices = append(indices, i)
			}
		}
		id := fmt.Sprint(indices)
		if shared[id] == nil {
			shared[id] = o.subset(indices)
		}
		byArch[a] = shared[id]
	}
	return byArch
}

// kernelArches lists the architectures to read kernels of: those some
// object pairs with (pairings), narrowed to the filter when it is not
// empty.
func kernelArches(pairings []pairing, filter []string) ([]string, error) {
	arches := archesFor(pairings)
	if len(filter) == 0 {
		return arches, nil
	}
	var keep []string
	for _, a := range filter {
		if n, _ := kernelkey.NormalizeArch(a); slices.Contains(arches, n) && !slices.Contains(keep, n) {
			keep = append(keep, n)
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("no object pairs with kernels of %s (they pair with %s)", strings.Join(filter, ", "), strings.Join(arches, ", "))
	}
	slices.Sort(keep)
	return keep, nil
}

package distill_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/btfrelocate"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

var update = flag.Bool("update", false, "rewrite the golden outcomes in testdata/golden")

// distilled is split BTF over a distilled base, with what is needed to
// check a relocation of it: the original split in cilium/ebpf's view and
// the base that was distilled.
type distilled struct {
	name      string
	split     *rawbtf.Spec // over its distilled base
	orig      *btf.Spec    // the split before distillation, over origBase
	origFirst btf.TypeID
	origBase  *btf.Spec
}

func distilledModule(t *testing.T, m module) distilled {
	t.Helper()
	k := kernelFor(t, m.release)
	_, split := distillModule(t, m)
	origBase := k.cilium()
	orig, err := btf.LoadSplitSpecFromReader(bytes.NewReader(m.btf), origBase)
	if err != nil {
		t.Fatal(err)
	}
	return distilled{name: m.name + " " + m.release, split: split, orig: orig, origFirst: k.raw.NextID(), origBase: origBase}
}

// outcome relocates d onto target in both modes, checks the result, and
// describes it for the golden file.
func outcome(t *testing.T, d distilled, target *kernel, targetName string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s -> %s: ", d.name, targetName)
	tspec := target.cilium()
	raw, err := distill.RelocateSpec(d.split, target.raw, nil)
	if err == nil {
		checkRelocated(t, d, target, tspec, raw)
		b.WriteString("ok\n")
		return b.String()
	}
	var ue *btfrelocate.UnmappedError
	if !errors.As(err, &ue) {
		t.Fatalf("%s: %v", b.String(), err)
	}
	checkUnmapped(t, d, tspec, ue)
	layoutRaw, layoutErr := distill.RelocateSpec(d.split, target.raw, &btfrelocate.Options{LayoutCompatible: true})
	if ue.LayoutCompatible != (layoutErr == nil) {
		t.Errorf("%s: error says layout-compatible mode would succeed: %v, but it returns %v", b.String(), ue.LayoutCompatible, layoutErr)
	}
	if layoutErr == nil {
		checkRelocated(t, d, target, tspec, layoutRaw)
		fmt.Fprintf(&b, "%d of %d unmapped, layout-compatible ok\n", len(ue.Types), ue.Total)
	} else {
		fmt.Fprintf(&b, "%d of %d unmapped\n", len(ue.Types), ue.Total)
	}
	for _, u := range ue.Types {
		fmt.Fprintf(&b, "\t%s\n", u)
	}
	return b.String()
}

// checkRelocated loads relocated split BTF with cilium/ebpf and compares
// it with the original.
func checkRelocated(t *testing.T, d distilled, target *kernel, tspec *btf.Spec, raw []byte) {
	t.Helper()
	reloc, err := btf.LoadSplitSpecFromReader(bytes.NewReader(raw), tspec)
	if err != nil {
		t.Fatalf("%s onto %s: cilium/ebpf rejects the result: %v", d.name, target.name, err)
	}
	if err := sameSplit(d.orig, reloc, d.origFirst, target.raw.NextID(), d.origBase, tspec); err != nil {
		t.Errorf("%s onto %s: %v", d.name, target.name, err)
	}
}

// checkUnmapped confirms each reported type with rules written again over
// cilium/ebpf's view of the new base: it has no single strict match, and
// a single layout-compatible one where the error says so.
func checkUnmapped(t *testing.T, d distilled, tspec *btf.Spec, ue *btfrelocate.UnmappedError) {
	t.Helper()
	embeds := embeddedNames(t, d.split)
	dist := d.split.Base()
	for _, u := range ue.Types {
		dt, err := dist.Type(u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if embeds[dt.Name] != u.Embedded {
			t.Errorf("%s: %s: embedded is %v, want %v", d.name, u, u.Embedded, embeds[dt.Name])
		}
		cands, _ := tspec.AnyTypesByName(dt.Name)
		composites := 0
		for _, c := range cands {
			if k := kindClass(c); (k == "struct" || k == "union") && !isFwd(c) {
				composites++
			}
		}
		var strict, loose int
		for _, c := range cands {
			if strictMatch(dt, c, u.Embedded, composites > 1) {
				strict++
			} else if layoutMatch(dt, c, u.Embedded) {
				loose++
			}
		}
		if strict == 1 {
			t.Errorf("%s: %s: reported unmapped, but the new base has exactly one match", d.name, u)
		}
		if u.LayoutCompatible && (strict != 0 || loose != 1) {
			t.Errorf("%s: %s: reported layout-compatible, but has %d strict and %d layout matches", d.name, u, strict, loose)
		}
	}
}

func isFwd(t btf.Type) bool { _, ok := t.(*btf.Fwd); return ok }

// embeddedNames are the names of the distilled base composites that the
// split's structs and unions embed.
func embeddedNames(t *testing.T, split *rawbtf.Spec) map[string]bool {
	t.Helper()
	base, err := btf.LoadSpecFromReader(bytes.NewReader(split.Base().Raw()))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(split.Raw()), base)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for typ, err := range spec.All() {
		if err != nil {
			t.Fatal(err)
		}
		if inSpec(base, typ) {
			continue
		}
		var members []btf.Member
		switch c := typ.(type) {
		case *btf.Struct:
			members = c.Members
		case *btf.Union:
			members = c.Members
		}
		for _, m := range members {
			if e := embeddedComposite(m.Type); e != nil && inSpec(base, e) {
				names[e.TypeName()] = true
			}
		}
	}
	return names
}

// strictMatch is libbpf's btf__relocate rule for distilled type d and
// candidate c of the same name.
func strictMatch(d rawbtf.Type, c btf.Type, embedded, sized bool) bool {
	size, _ := btf.Sizeof(c)
	switch d.Kind {
	case rawbtf.KindInt:
		i, ok := c.(*btf.Int)
		return ok && i.Size == d.Size() && uint8(i.Encoding) == d.Int().Encoding
	case rawbtf.KindFloat:
		f, ok := c.(*btf.Float)
		return ok && f.Size == d.Size()
	case rawbtf.KindEnum, rawbtf.KindEnum64:
		e, ok := c.(*btf.Enum)
		return ok && e.Size == d.Size()
	case rawbtf.KindFwd:
		want := map[bool]string{false: "struct", true: "union"}[d.KindFlag]
		if f, ok := c.(*btf.Fwd); ok {
			return kindClass(f) == want
		}
		return !isFwd(c) && kindClass(c) == want
	case rawbtf.KindStruct, rawbtf.KindUnion:
		if isFwd(c) || kindClass(c) != d.Kind.String() {
			return false
		}
		return !(embedded || sized) || uint32(size) == d.Size()
	}
	return false
}

// layoutMatch is what layout-compatible mode accepts besides strictMatch.
func layoutMatch(d rawbtf.Type, c btf.Type, embedded bool) bool {
	switch d.Kind {
	case rawbtf.KindInt:
		i, ok := c.(*btf.Int)
		return ok && i.Size == d.Size()
	case rawbtf.KindStruct, rawbtf.KindUnion:
		return !embedded && kindClass(c) == d.Kind.String()
	}
	return false
}

// compareGolden compares got with testdata/golden/name, or writes it
// there with -update.
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\ngot:  %s\nwant: %s\n(run with -update after checking the change)", path, i+1, g, w)
			}
		}
	}
}

// acrossBuilds relocates every module onto every other target kernel,
// modules in parallel, and returns the outcomes in module order.
func acrossBuilds(t *testing.T, mods []module, targets []string) string {
	t.Helper()
	out := make([]string, len(mods))
	t.Run("modules", func(t *testing.T) {
		for i, m := range mods {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				d := distilledModule(t, m)
				for _, target := range targets {
					if target != m.release {
						out[i] += outcome(t, d, kernelFor(t, target), target)
					}
				}
			})
		}
	})
	return strings.Join(out, "")
}

// x86Kernels are the x86_64 testdata kernels: two 6.1 builds and a 6.12.
var x86Kernels = []string{"6.1.0-47-amd64", "6.1.0-50-cloud-amd64", "6.12.118+deb12-amd64"}

func TestAcrossBuildsCommitted(t *testing.T) {
	var x86 []module
	for _, m := range committedModules(t) {
		if m.arch == "x86_64" {
			x86 = append(x86, m)
		}
	}
	compareGolden(t, "committed.txt", acrossBuilds(t, x86, x86Kernels))
}

func TestAcrossBuildsCorpus(t *testing.T) {
	var x86 []module
	for _, m := range corpusModules(t) {
		if m.arch == "x86_64" {
			x86 = append(x86, m)
		}
	}
	compareGolden(t, "corpus.txt", acrossBuilds(t, x86, x86Kernels))
}

func TestAcrossBuildsPackage(t *testing.T) {
	compareGolden(t, "package.txt", acrossBuilds(t, packageModules(t), x86Kernels))
}

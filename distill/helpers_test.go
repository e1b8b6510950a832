package distill_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/kerneltest/kernelspec"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// kernel is a vmlinux BTF in both readers.
type kernel struct {
	name string
	raw  *rawbtf.Spec
	spec *btf.Spec // never used directly: see cilium
}

// cilium returns a copy of the kernel's cilium/ebpf spec for one
// goroutine: cilium/ebpf v0.22 inflates base types without the base's lock
// when split specs over one base are read concurrently.
func (k *kernel) cilium() *btf.Spec { return k.spec.Copy() }

// newKernel parses raw BTF named name, once per test binary.
func newKernel(tb testing.TB, name string, raw []byte) *kernel {
	tb.Helper()
	k := kernelspec.Must(tb, name, raw)
	return &kernel{name: k.Name, raw: k.Raw, spec: k.Spec}
}

// kernelFor returns the testdata kernel of a release ("6.1.0-47-amd64").
func kernelFor(tb testing.TB, release string) *kernel {
	tb.Helper()
	k := kerneltest.ByName(tb, "/"+release)
	return newKernel(tb, k.Name, k.BTF)
}

// module is a kernel module's split BTF and the release it was built for.
type module struct {
	name    string // file name without directories
	arch    string
	release string
	btf     []byte
}

// committedModules are the modules in testdata, named
// <module>-<release>.ko.xz.
func committedModules(tb testing.TB) []module {
	tb.Helper()
	paths, err := filepath.Glob("testdata/*.ko.xz")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no testdata modules: %v", err)
	}
	var mods []module
	for _, p := range paths {
		base := strings.TrimSuffix(filepath.Base(p), ".ko.xz")
		name, release, ok := strings.Cut(base, "-")
		if !ok {
			tb.Fatalf("%s: want <module>-<release>.ko.xz", p)
		}
		arch := "x86_64"
		if strings.HasSuffix(release, "-arm64") {
			arch = "arm64"
		}
		mods = append(mods, readModuleFile(tb, p, name, arch, release))
	}
	return mods
}

func readModuleFile(tb testing.TB, path, name, arch, release string) module {
	tb.Helper()
	m, err := corpus.ReadBTF(path)
	if err != nil {
		tb.Fatal(err)
	}
	return module{name: name, arch: arch, release: release, btf: m.BTF}
}

// corpusModules are the modules of $BTFEMBED_CORPUS/modules/<arch>/<release>.
func corpusModules(tb testing.TB) []module {
	tb.Helper()
	dir := kerneltest.SharedCorpus(tb)
	paths, err := filepath.Glob(filepath.Join(dir, "modules", "*", "*", "*.ko*"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no modules under %s/modules: %v", dir, err)
	}
	var mods []module
	for _, p := range paths {
		rel := filepath.Dir(p)
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), ".xz"), ".ko")
		mods = append(mods, readModuleFile(tb, p, name, filepath.Base(filepath.Dir(rel)), filepath.Base(rel)))
	}
	return mods
}

// debRelease is the kernel of the corpus's one whole package.
const (
	debRelease = "6.1.0-50-cloud-amd64"
	debFile    = "linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb"
)

var debModules = sync.OnceValues(func() ([]module, error) {
	f, err := os.Open(filepath.Join(os.Getenv("BTFEMBED_CORPUS"), "packages", debFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := extract.ReadDeb(f, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	var mods []module
	for _, m := range c.Modules {
		if m.Err != nil {
			return nil, fmt.Errorf("%s: %w", m.Path, m.Err)
		}
		_, name, _ := strings.Cut(m.Path, "/kernel/")
		mods = append(mods, module{name: strings.TrimSuffix(name, ".ko"), arch: "x86_64", release: debRelease, btf: m.BTF})
	}
	slices.SortFunc(mods, func(a, b module) int { return strings.Compare(a.name, b.name) })
	return mods, nil
})

// packageModules are the 1,121 modules of the corpus's Debian package,
// named by their path under kernel/.
func packageModules(tb testing.TB) []module {
	tb.Helper()
	kerneltest.SharedCorpus(tb)
	if testing.Short() {
		tb.Skip("reading 1,121 modules from a package is skipped in -short mode")
	}
	mods, err := debModules()
	if err != nil {
		tb.Fatalf("%s: %v", debFile, err)
	}
	return mods
}

// parseSplit parses module BTF over its kernel.
func parseSplit(tb testing.TB, data []byte, base *rawbtf.Spec) *rawbtf.Spec {
	tb.Helper()
	s, err := rawbtf.Parse(data, base)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// distillModule distills a module over its own kernel and parses the
// result.
func distillModule(tb testing.TB, m module) (distBase, distSplit *rawbtf.Spec) {
	tb.Helper()
	k := kernelFor(tb, m.release)
	base, split, err := distill.DistillSpec(parseSplit(tb, m.btf, k.raw))
	if err != nil {
		tb.Fatalf("distill %s: %v", m.name, err)
	}
	distBase, err = rawbtf.Parse(base, nil)
	if err != nil {
		tb.Fatalf("distilled base of %s: %v", m.name, err)
	}
	return distBase, parseSplit(tb, split, distBase)
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

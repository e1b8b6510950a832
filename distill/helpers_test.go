package distill_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/therootcompany/xz"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/generator/corpus"
	"github.com/btfembed/btfembed/internal/kerneltest"
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

var kernels sync.Map // release -> func() (*kernel, error)

// kernelFor returns the testdata kernel of a release ("6.1.0-47-amd64").
func kernelFor(tb testing.TB, release string) *kernel {
	tb.Helper()
	k := kerneltest.ByName(tb, "/"+release)
	load, _ := kernels.LoadOrStore(release, sync.OnceValues(func() (*kernel, error) {
		raw, err := rawbtf.Parse(k.BTF, nil)
		if err != nil {
			return nil, err
		}
		spec, err := btf.LoadSpecFromReader(bytes.NewReader(k.BTF))
		if err != nil {
			return nil, err
		}
		return &kernel{name: k.Name, raw: raw, spec: spec}, nil
	}))
	kern, err := load.(func() (*kernel, error))()
	if err != nil {
		tb.Fatalf("%s: %v", k.Name, err)
	}
	return kern
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

// corpusDir is $BTFEMBED_CORPUS, skipping the test when it is unset.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("BTFEMBED_CORPUS")
	if dir == "" {
		tb.Skip("BTFEMBED_CORPUS is unset: set it to the shared corpus directory (.ci/run uses ../shared/corpus)")
	}
	return dir
}

// corpusModules are the modules of $BTFEMBED_CORPUS/modules/<arch>/<release>.
func corpusModules(tb testing.TB) []module {
	tb.Helper()
	dir := corpusDir(tb)
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
	dir := os.Getenv("BTFEMBED_CORPUS")
	f, err := os.Open(filepath.Join(dir, "packages", debFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := arMember(f, "data.tar.xz")
	if err != nil {
		return nil, err
	}
	zr, err := xz.NewReader(data, 0)
	if err != nil {
		return nil, err
	}
	var mods []module
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(h.Name, ".ko") {
			continue
		}
		m, err := corpus.ReadBTFFromReader(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.Name, err)
		}
		_, name, _ := strings.Cut(h.Name, "/kernel/")
		mods = append(mods, module{name: strings.TrimSuffix(name, ".ko"), arch: "x86_64", release: debRelease, btf: m.BTF})
	}
	slices.SortFunc(mods, func(a, b module) int { return strings.Compare(a.name, b.name) })
	return mods, nil
})

// packageModules are the 1,121 modules of the corpus's Debian package,
// named by their path under kernel/.
func packageModules(tb testing.TB) []module {
	tb.Helper()
	corpusDir(tb)
	if testing.Short() {
		tb.Skip("reading 1,121 modules from a package is skipped in -short mode")
	}
	mods, err := debModules()
	if err != nil {
		tb.Fatalf("%s: %v", debFile, err)
	}
	return mods
}

// arMember returns a reader of the named member of an ar archive (a .deb).
func arMember(f *os.File, name string) (io.Reader, error) {
	magic := make([]byte, 8)
	if _, err := io.ReadFull(f, magic); err != nil || string(magic) != "!<arch>\n" {
		return nil, fmt.Errorf("not an ar archive")
	}
	off := int64(8)
	for {
		var hdr [60]byte
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			return nil, fmt.Errorf("no member %s: %w", name, err)
		}
		var size int64
		if _, err := fmt.Sscan(string(hdr[48:58]), &size); err != nil {
			return nil, fmt.Errorf("ar header at %d: %w", off, err)
		}
		off += 60
		if strings.TrimRight(strings.TrimSpace(string(hdr[:16])), "/") == name {
			return io.NewSectionReader(f, off, size), nil
		}
		off += size + size%2
	}
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

package vmtest_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/generator/corpus"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vmtest"
	"github.com/btfembed/btfembed/runtime/kernelkey"
)

// fieldKernel is one kernel of the shared corpus the field test boots.
type fieldKernel struct {
	release string
	arch    string
	// fromDeb takes the image from the corpus's distribution package
	// instead of images/, and loads nf_conntrack and its dependencies from
	// the package's modules.
	fromDeb bool
}

// execsnoopObject is bpf2go's object of examples/execsnoop for k's
// architecture (the generator pairs each with its architecture's kernels).
func (k fieldKernel) execsnoopObject() string {
	return map[string]string{"x86_64": "bpf_x86_bpfel.o", "arm64": "bpf_arm64_bpfel.o"}[k.arch]
}

func (k fieldKernel) name() string {
	if k.fromDeb {
		return "deb/" + k.release
	}
	return k.release
}

// fieldKernels are booted in this order; the slowest (arm64 under TCG on
// an x86 host) first, so that it does not run alone at the end.
var fieldKernels = []fieldKernel{
	{release: "6.1.0-57-arm64", arch: "arm64"},
	{release: "6.1.0-47-amd64", arch: "x86_64"},
	{release: "6.1.0-50-cloud-amd64", arch: "x86_64"},
	{release: "6.12.118+deb12-amd64", arch: "x86_64"},
	{release: "6.1.0-50-cloud-amd64", arch: "x86_64", fromDeb: true},
}

const (
	debPackage = "packages/linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb"
	debModule  = "nf_conntrack" // loaded with its dependencies on the deb's kernel
	osRelease  = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n"
)

// needsKernelBTF holds the program types that attach by the kernel's BTF
// IDs (tp_btf, fentry, fexit, fmod_ret, iter: Tracing; lsm; struct_ops;
// freplace: Extension). They cannot load on a kernel without BTF whatever
// BTF is embedded, so they are left out of the comparison.
var needsKernelBTF = map[string]bool{
	ebpf.Tracing.String():   true,
	ebpf.LSM.String():       true,
	ebpf.StructOps.String(): true,
	ebpf.Extension.String(): true,
}

// TestField boots every kernel of the shared corpus twice, the way an agent
// meets it: with its BTF hidden (a kernel without BTF) and visible. The
// guest selects BTF with runtime's CollectionOptions(nil), nothing forced,
// from a payload the generator made for the testdata corpus and objects,
// loads every program of every object with it, and runs the execsnoop
// example. With BTF hidden the selector must pick the embedded entry by
// uname and os-release; every program that loads with the kernel's BTF
// must load with the embedded BTF; execsnoop must report the guest's exec
// with the right pid, parent pid and comm. On the kernel of the .deb, the
// guest first loads nf_conntrack and its dependencies, and a kprobe reading
// nf_conntrack's module types must load with the embedded module BTF.
// Each boot's verdicts are also compared with package predict's
// (prediction_test.go): a contradiction fails the test, and the match
// rate is logged per kernel and in total.
func TestField(t *testing.T) {
	dir := kerneltest.SharedCorpus(t)
	total := &matchTotal{}
	t.Cleanup(func() { total.log(t) })
	for _, k := range fieldKernels {
		t.Run(k.name(), func(t *testing.T) {
			vmtest.Require(t, k.arch)
			t.Parallel()
			fx, err := fieldFixture(dir)
			if err != nil {
				t.Fatal(err)
			}
			m, err := fx.machine(t, dir, k)
			if err != nil {
				t.Fatal(err)
			}
			hidden, visible := bootBoth(t, m)
			if *fieldOut != "" {
				if err := writeResult(*fieldOut, k, hidden, visible); err != nil {
					t.Error(err)
				}
			}
			problems := checkField(k, hidden, visible)
			for _, p := range problems {
				t.Error(p)
			}
			t.Log(summary(k, hidden, visible))
			total.addKernel(checkPredictions(t, fx, k, hidden, visible))
		})
	}
}

var fieldOut = flag.String("field.out", "", "write each kernel's per-program verdicts as JSON (vmtest.FieldResult) into this directory")

// writeResult writes kernel k's verdicts into dir.
func writeResult(dir string, k fieldKernel, hidden, visible *vmtest.Boot) error {
	res := vmtest.FieldResult{Kernel: k.name(), Arch: k.arch, Release: k.release}
	for _, side := range []struct {
		boot *vmtest.Boot
		out  *[]vmtest.ProgramLoad
	}{{visible, &res.KernelBTF}, {hidden, &res.Embedded}} {
		for _, rec := range side.boot.Find(vmtest.KindProgramLoad) {
			var p vmtest.ProgramLoad
			if err := rec.Decode(&p); err != nil {
				return err
			}
			*side.out = append(*side.out, p)
		}
	}
	data, err := json.MarshalIndent(res, "", "\t")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, strings.ReplaceAll(k.name(), "/", "-")+".json"), append(data, '\n'), 0o644)
}

// bootBoth boots m with the kernel's BTF hidden and visible, at once.
func bootBoth(t *testing.T, m vmtest.Machine) (hidden, visible *vmtest.Boot) {
	t.Helper()
	var wg sync.WaitGroup
	var errHidden, errVisible error
	wg.Go(func() {
		hm := m
		hm.Cmdline = append(slices.Clone(m.Cmdline), vmtest.FieldHideBTF)
		hidden, errHidden = vmtest.Run(t.Context(), &hm)
	})
	wg.Go(func() { visible, errVisible = vmtest.Run(t.Context(), &m) })
	wg.Wait()
	if errHidden != nil || errVisible != nil {
		t.Fatalf("BTF hidden: %v\nBTF visible: %v", errHidden, errVisible)
	}
	return hidden, visible
}

// fieldRun is one boot's records, decoded.
type fieldRun struct {
	host      vmtest.FieldHost
	modules   []vmtest.FieldModule
	sel       vmtest.FieldSelect
	programs  map[string]vmtest.ProgramLoad // by object/program
	execsnoop vmtest.FieldExecsnoop
}

func decodeRun(b *vmtest.Boot) (*fieldRun, error) {
	r := &fieldRun{programs: map[string]vmtest.ProgramLoad{}}
	one := func(kind string, v any) error {
		recs := b.Find(kind)
		if len(recs) != 1 {
			return fmt.Errorf("%d %q records, want 1", len(recs), kind)
		}
		return recs[0].Decode(v)
	}
	if err := one(vmtest.KindFieldHost, &r.host); err != nil {
		return nil, err
	}
	if err := one(vmtest.KindFieldSelect, &r.sel); err != nil {
		return nil, err
	}
	if r.sel.Error != "" {
		return r, nil // the guest stops there
	}
	if err := one(vmtest.KindFieldExecsnoop, &r.execsnoop); err != nil {
		return nil, err
	}
	for _, rec := range b.Find(vmtest.KindFieldModule) {
		var m vmtest.FieldModule
		if err := rec.Decode(&m); err != nil {
			return nil, err
		}
		r.modules = append(r.modules, m)
	}
	for _, rec := range b.Find(vmtest.KindProgramLoad) {
		var p vmtest.ProgramLoad
		if err := rec.Decode(&p); err != nil {
			return nil, err
		}
		r.programs[p.Object+"/"+p.Program] = p
	}
	return r, nil
}

// mustLoad are programs that load on every kernel with either BTF, so that
// the comparison is never vacuous; the kprobe into nf_conntrack's types
// needs the module, loaded only on the deb's kernel.
func mustLoad(k fieldKernel) []string {
	progs := []string{k.execsnoopObject() + "/handle_exec"}
	if k.fromDeb {
		progs = append(progs, "conntrack_kprobe-el.o/ct_delete_kprobe")
	}
	return progs
}

// checkField compares the two boots of kernel k and returns every problem.
func checkField(k fieldKernel, hiddenBoot, visibleBoot *vmtest.Boot) []string {
	hidden, err := decodeRun(hiddenBoot)
	if err != nil {
		return []string{fmt.Sprintf("BTF hidden: %v", err)}
	}
	visible, err := decodeRun(visibleBoot)
	if err != nil {
		return []string{fmt.Sprintf("BTF visible: %v", err)}
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	for _, r := range []*fieldRun{hidden, visible} {
		if r.host.Release != k.release || !r.host.KernelBTF {
			bad("booted %s (kernel BTF %v), want %s with /sys/kernel/btf/vmlinux", r.host.Release, r.host.KernelBTF, k.release)
		}
		for _, m := range r.modules {
			if m.Error != "" {
				bad("module %s: %s", m.Name, m.Error)
			}
		}
	}
	if !hidden.host.Hidden || visible.host.Hidden {
		bad("BTF hidden %v and %v, want true and false", hidden.host.Hidden, visible.host.Hidden)
	}
	if s := hidden.sel; s.Error != "" || s.Source != "embedded" || s.Release != k.release || s.Distro != "debian" || s.Version != "12" {
		bad("BTF hidden: selected %+v, want the embedded entry debian 12 %s", s, k.release)
	}
	if s := visible.sel; s.Error != "" || s.Source != "kernel" {
		bad("BTF visible: selected %+v, want the kernel's BTF", s)
	}
	if k.fromDeb && !slices.Contains(hidden.sel.Modules, debModule) {
		bad("BTF hidden: embedded modules %v, want %s", hidden.sel.Modules, debModule)
	}
	if hidden.sel.Error != "" || visible.sel.Error != "" {
		return problems // the guest loaded nothing
	}

	for _, key := range sortedKeys(visible.programs) {
		v, h := visible.programs[key], hidden.programs[key]
		switch {
		case h.Program == "":
			bad("%s: tried with BTF visible only", key)
		case needsKernelBTF[v.Type]:
			// Attaches by BTF ID: cannot load without kernel BTF.
		case v.Loaded && !h.Loaded:
			bad("%s (%s) loads with the kernel's BTF, not with the embedded BTF: %s", key, v.Section, h.Error)
		}
	}
	if len(hidden.programs) != len(visible.programs) {
		bad("%d programs tried with BTF hidden, %d visible", len(hidden.programs), len(visible.programs))
	}
	for _, key := range mustLoad(k) {
		for which, r := range map[string]*fieldRun{"hidden": hidden, "visible": visible} {
			if p := r.programs[key]; !p.Loaded {
				bad("%s does not load with BTF %s: %s", key, which, p.Error)
			}
		}
	}

	for which, r := range map[string]*fieldRun{"embedded": hidden, "kernel": visible} {
		e := r.execsnoop
		if e.Error != "" || !strings.Contains(e.Banner, "BTF from "+which) ||
			e.Pid != e.WantPid || e.Ppid != e.WantPpid || e.Comm != path.Base(vmtest.FieldExecChild) {
			bad("execsnoop with %s BTF: %+v, want BTF from %s and comm %s", which, e, which, path.Base(vmtest.FieldExecChild))
		}
	}
	slices.Sort(problems)
	return problems
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// summary is the line the test logs per kernel: what loaded with either
// BTF, and the boot times.
func summary(k fieldKernel, hiddenBoot, visibleBoot *vmtest.Boot) string {
	count := func(b *vmtest.Boot) (loaded, excluded, total int, names []string) {
		r, err := decodeRun(b)
		if err != nil {
			return
		}
		for _, key := range sortedKeys(r.programs) {
			p := r.programs[key]
			total++
			if needsKernelBTF[p.Type] {
				excluded++
			}
			if p.Loaded {
				loaded++
				names = append(names, key)
			}
		}
		return
	}
	kl, kx, kt, kn := count(visibleBoot)
	el, _, et, en := count(hiddenBoot)
	return fmt.Sprintf("%s: kernel BTF %d/%d programs loaded (%d need kernel BTF to attach), embedded BTF %d/%d; boot to /init %.1fs and %.1fs, total %.1fs and %.1fs\n  kernel:   %s\n  embedded: %s",
		k.name(), kl, kt, kx, el, et,
		visibleBoot.UntilInit.Seconds(), hiddenBoot.UntilInit.Seconds(), visibleBoot.Total.Seconds(), hiddenBoot.Total.Seconds(),
		strings.Join(kn, " "), strings.Join(en, " "))
}

// fixture is what every boot shares, made once per test binary.
type fixture struct {
	payload []byte
	objects []vmtest.File
	// archObjects are the objects of one architecture (execsnoop's).
	archObjects map[string]vmtest.File
	// debImage and debModules come from the distribution package:
	// the kernel image and debModule with its dependencies, in load order.
	debImage   []byte
	debModules []vmtest.File
	// corpus is the full BTF the payload was generated from, by
	// corpusKey, for the predictions the boots are compared with.
	corpus map[string]*corpus.Kernel

	builds sync.Map // arch -> *archBuild
}

type archBuild struct {
	once            sync.Once
	init, execsnoop []byte
	err             error
}

// fieldFixture is made once, from the corpus directory of the first call.
var fieldFixture = onceByDir(newFixture)

// onceByDir runs f once, with the corpus directory of the first call.
func onceByDir(f func(string) (*fixture, error)) func(string) (*fixture, error) {
	var once sync.Once
	var fx *fixture
	var err error
	return func(dir string) (*fixture, error) {
		once.Do(func() { fx, err = f(dir) })
		return fx, err
	}
}

func repoPath(parts ...string) string {
	return filepath.Join(append([]string{kerneltest.Dir(), ".."}, parts...)...)
}

func newFixture(corpusDir string) (*fixture, error) {
	fx := &fixture{}
	deb := filepath.Join(corpusDir, debPackage)
	release := "6.1.0-50-cloud-amd64"
	image, modules, err := debKernel(deb, release, debModule)
	if err != nil {
		return nil, err
	}
	fx.debImage = image
	for i, m := range modules {
		fx.debModules = append(fx.debModules, vmtest.File{
			Path: fmt.Sprintf("%s/%02d-%s.ko", vmtest.FieldModules, i, m.name), Mode: 0o644, Data: m.data,
		})
	}

	// The payload: the testdata corpus with its modules, plus the deb's
	// nf_conntrack paired with testdata's vmlinux BTF of the same kernel.
	objects, err := filepath.Glob(repoPath("testdata", "objects", "*-el.o"))
	if err != nil {
		return nil, err
	}
	objects = append(objects, repoPath("internal", "vmtest", "testdata", "conntrack_kprobe-el.o"))
	fx.archObjects = map[string]vmtest.File{}
	for _, k := range fieldKernels {
		objects = append(objects, repoPath("examples", "execsnoop", k.execsnoopObject()))
	}
	slices.Sort(objects)
	objects = slices.Compact(objects)
	for _, o := range objects {
		data, err := os.ReadFile(o)
		if err != nil {
			return nil, err
		}
		f := vmtest.File{Path: vmtest.FieldObjects + "/" + filepath.Base(o), Mode: 0o644, Data: data}
		if filepath.Dir(o) != repoPath("examples", "execsnoop") {
			fx.objects = append(fx.objects, f)
		}
		for _, k := range fieldKernels {
			if filepath.Base(o) == k.execsnoopObject() {
				fx.archObjects[k.arch] = f
			}
		}
	}
	modRoot, err := os.MkdirTemp("", "btfembed-field-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(modRoot)
	modDir := corpus.ModulesPath(modRoot, kernelkey.Key{Distro: "debian", Version: "12", Arch: "x86_64", Release: release})
	if err := os.MkdirAll(modDir, 0o755); err != nil {
		return nil, err
	}
	conntrack := modules[len(modules)-1]
	if err := os.WriteFile(filepath.Join(modDir, conntrack.name+".ko"), conntrack.data, 0o644); err != nil {
		return nil, err
	}
	roots := []string{repoPath("testdata", "btfhub"), repoPath("testdata", "corpus-extra"), modRoot}
	res, err := generator.Generate(context.Background(), &generator.Args{
		Objects: objects,
		Corpus:  roots,
		Strict:  true,
	})
	if err != nil {
		return nil, fmt.Errorf("generate the payload: %w", err)
	}
	if fx.payload, err = res.Payload(); err != nil {
		return nil, err
	}
	if fx.corpus, err = readCorpus(roots); err != nil {
		return nil, err
	}
	return fx, nil
}

// build returns /init and execsnoop for arch, built once.
func (fx *fixture) build(arch string) (init, execsnoop []byte, err error) {
	v, _ := fx.builds.LoadOrStore(arch, &archBuild{})
	b := v.(*archBuild)
	b.once.Do(func() {
		ctx := context.Background()
		if b.init, b.err = vmtest.Build(ctx, "github.com/btfembed/btfembed/internal/vmtest/fieldinit", arch); b.err != nil {
			return
		}
		b.execsnoop, b.err = vmtest.Build(ctx, "github.com/btfembed/btfembed/examples/execsnoop", arch)
	})
	return b.init, b.execsnoop, b.err
}

// machine is the boot of kernel k with the field test's initramfs.
func (fx *fixture) machine(t *testing.T, corpusDir string, k fieldKernel) (vmtest.Machine, error) {
	init, execsnoop, err := fx.build(k.arch)
	if err != nil {
		return vmtest.Machine{}, err
	}
	files := []vmtest.File{
		{Path: "init", Mode: 0o755, Data: init},
		{Path: vmtest.FieldExecChild, Mode: os.ModeSymlink | 0o777, Data: []byte("/init")},
		{Path: vmtest.FieldExecsnoopBin, Mode: 0o755, Data: execsnoop},
		{Path: vmtest.FieldOSRelease, Mode: 0o644, Data: []byte(osRelease)},
		{Path: vmtest.FieldPayload, Mode: 0o644, Data: fx.payload},
	}
	files = append(files, fx.objects...)
	files = append(files, fx.archObjects[k.arch])
	kernel := filepath.Join(corpusDir, "images", "vmlinuz-"+k.release)
	if k.fromDeb {
		files = append(files, fx.debModules...)
		kernel = filepath.Join(t.TempDir(), "vmlinuz-"+k.release)
		if err := os.WriteFile(kernel, fx.debImage, 0o644); err != nil {
			return vmtest.Machine{}, err
		}
	}
	// Each guest parses its kernel's 5 MB BTF twice with it visible, slow
	// under TCG: an arm64 guest took 100 s on a loaded 2-core machine.
	return vmtest.Machine{Arch: k.arch, Kernel: kernel, Initramfs: files, Timeout: 4 * time.Minute}, nil
}

// debFile is one module of a package.
type debFile struct {
	name string
	data []byte
}

// debKernel takes release's kernel image and module with its dependencies
// (modinfo's depends=, recursively) out of a kernel package, dependencies
// first.
func debKernel(deb, release, module string) (image []byte, modules []debFile, err error) {
	f, err := os.Open(deb)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	byName := map[string][]byte{}
	modPrefix := "lib/modules/" + release + "/"
	err = extract.DebFiles(f, func(p string) bool {
		return p == "boot/vmlinuz-"+release || (strings.HasPrefix(p, modPrefix) && strings.HasSuffix(p, ".ko"))
	}, func(p string, data []byte) error {
		if strings.HasPrefix(p, "boot/") {
			image = data
		} else {
			byName[moduleName(path.Base(p))] = data
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", deb, err)
	}
	if image == nil {
		return nil, nil, fmt.Errorf("%s: no boot/vmlinuz-%s", deb, release)
	}
	seen := map[string]bool{}
	var visit func(name string) error
	visit = func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		data, ok := byName[name]
		if !ok {
			return fmt.Errorf("%s: no module %s for %s", deb, name, release)
		}
		deps, err := modinfoDepends(data)
		if err != nil {
			return fmt.Errorf("%s: module %s: %w", deb, name, err)
		}
		for _, d := range deps {
			if err := visit(d); err != nil {
				return err
			}
		}
		modules = append(modules, debFile{name: name, data: data})
		return nil
	}
	return image, modules, visit(module)
}

// moduleName is a module's name as modinfo's depends= spells it.
func moduleName(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".ko"), "-", "_")
}

// modinfoDepends reads the depends= entry of a module's .modinfo section
// (NUL-separated key=value strings, written by modpost).
func modinfoDepends(ko []byte) ([]string, error) {
	f, err := elf.NewFile(bytes.NewReader(ko))
	if err != nil {
		return nil, err
	}
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("no .modinfo section")
	}
	info, err := sec.Data()
	if err != nil {
		return nil, err
	}
	for _, kv := range bytes.Split(info, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			if len(v) == 0 {
				return nil, nil
			}
			return strings.Split(string(v), ","), nil
		}
	}
	return nil, nil
}

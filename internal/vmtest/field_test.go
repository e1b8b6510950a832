package vmtest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/dwarfkernel"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/pahole"
	payloadfmt "github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/vmtest"
)

// fieldKernel is one kernel the field test boots.
type fieldKernel struct {
	release string // empty for fetched: the archive's newest
	arch    string
	// distro and version are the guest's os-release and the corpus
	// entry it must select.
	distro, version string
	source          kernelSource
	// member is, for a kernel the payload does not embed (the family
	// test, family_test.go), the build of its family whose BTF must
	// serve it with its own BTF hidden.
	member string
}

// kernelSource says where a field kernel's image and its corpus BTF come
// from.
type kernelSource uint8

const (
	// fromImages: images/vmlinuz-<release> of the shared corpus, BTF from
	// testdata/btfhub.
	fromImages kernelSource = iota
	// fromDeb: image and modules from the corpus's distribution package
	// (debPackage); nf_conntrack and its dependencies are loaded.
	fromDeb
	// fromOlder: images/vmlinuz-<release>, BTF from the shared corpus's
	// btfhub/ (Debian 11), which testdata does not ship.
	fromOlder
	// fromDWARF: built without BTF (the corpus's nobtf/); its entry is
	// imported from its DWARF vmlinux with pahole.
	fromDWARF
	// fromArchive: Debian's 686-pae, built without BTF, fetched from
	// Debian's archive with its -dbg package (kerneltest.Debian686PAE),
	// whose DWARF vmlinux the entry is imported from.
	fromArchive
	// fromBuild: Linux 4.15, built here without BTF from Ubuntu 18.04's
	// kernel source (kerneltest.Ubuntu1804Kernel, with $BTFEMBED_FETCH),
	// whose DWARF vmlinux the entry is imported from: the one kernel
	// older than global data (5.2) and ring buffers (5.8).
	fromBuild
	// fromVendor: Linux 6.1 built without BTF under a vendor's release,
	// 4.18.0-305.el8.x86_64 (scripts/build-kernel-vendor.sh), image and
	// entry (imported from its DWARF by corpus import) committed in
	// testdata/vendorkernel: its release understates its BPF, and the
	// predictions must come from its types.
	fromVendor
)

// ownBTF says whether the kernel has /sys/kernel/btf/vmlinux. Kernels
// with it are booted twice, BTF hidden and visible; kernels without it
// once, as they are.
func (k fieldKernel) ownBTF() bool {
	return k.source != fromDWARF && k.source != fromArchive && k.source != fromBuild && k.source != fromVendor
}

// ringbuf says whether the kernel has ring buffers (5.8), which
// execsnoop's handle_exec writes its events to. Where it has not,
// execsnoop must fail to start, and handle_exec is compared with its
// prediction only.
func (k fieldKernel) ringbuf() bool { return k.source != fromBuild }

// execsnoopObject is bpf2go's object of examples/execsnoop for k's
// architecture (the generator pairs each with its architecture's kernels).
func (k fieldKernel) execsnoopObject() string {
	return map[string]string{"x86_64": "bpf_x86_bpfel.o", "i386": "bpf_x86_bpfel.o", "arm64": "bpf_arm64_bpfel.o"}[k.arch]
}

func (k fieldKernel) name() string {
	switch k.source {
	case fromDeb:
		return "deb/" + k.release
	case fromDWARF:
		return "nobtf/" + k.release
	case fromArchive:
		return "debian-686-pae"
	case fromBuild:
		return "ubuntu-4.15"
	case fromVendor:
		return "vendor/" + k.release
	}
	return k.release
}

// fieldKernels are booted in this order; the slowest (arm64 under TCG on
// an x86 host) first, so that it does not run alone at the end.
var fieldKernels = []fieldKernel{
	{release: "6.1.0-57-arm64", arch: "arm64", distro: "debian", version: "12"},
	{arch: "i386", distro: "debian", version: "12", source: fromArchive},
	{arch: "x86_64", distro: "ubuntu", version: "18.04", source: fromBuild},
	{release: "6.1.0-47-amd64", arch: "x86_64", distro: "debian", version: "12"},
	{release: "6.1.0-50-cloud-amd64", arch: "x86_64", distro: "debian", version: "12"},
	{release: "6.12.118+deb12-amd64", arch: "x86_64", distro: "debian", version: "12"},
	{release: "6.1.0-50-cloud-amd64", arch: "x86_64", distro: "debian", version: "12", source: fromDeb},
	{release: "5.10.0-32-amd64", arch: "x86_64", distro: "debian", version: "11", source: fromOlder},
	{release: "6.1.176", arch: "x86_64", distro: "debian", version: "12", source: fromDWARF},
	{release: kerneltest.VendorRelease, arch: "x86_64", distro: "centos", version: "8", source: fromVendor},
}

const (
	debPackage = "packages/linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb"
	debModule  = "nf_conntrack" // loaded with its dependencies on the deb's kernel
)

// osRelease is the guest's /etc/os-release for a Debian, Ubuntu or
// CentOS version.
func osRelease(distro, version string) string {
	if distro == "centos" {
		return fmt.Sprintf("NAME=\"CentOS Linux\"\nVERSION=\"%[1]s\"\nID=\"centos\"\nID_LIKE=\"rhel fedora\"\nVERSION_ID=\"%[1]s\"\nPRETTY_NAME=\"CentOS Linux %[1]s\"\n", version)
	}
	if distro == "ubuntu" {
		codename := map[string]string{"18.04": "bionic"}[version]
		return fmt.Sprintf("NAME=\"Ubuntu\"\nVERSION=\"%[1]s LTS\"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME=\"Ubuntu %[1]s LTS\"\nVERSION_ID=\"%[1]s\"\nVERSION_CODENAME=%[2]s\nUBUNTU_CODENAME=%[2]s\n", version, codename)
	}
	codename := map[string]string{"11": "bullseye", "12": "bookworm"}[version]
	return fmt.Sprintf("PRETTY_NAME=\"Debian GNU/Linux %[1]s (%[2]s)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"%[1]s\"\nVERSION=\"%[1]s (%[2]s)\"\nVERSION_CODENAME=%[2]s\nID=debian\n", version, codename)
}

// needsKernelBTF holds the program types that attach by the kernel's BTF
// IDs (tp_btf, fentry, fexit, fmod_ret, iter: Tracing; lsm; struct_ops;
// freplace: Extension). With the kernel's BTF hidden they cannot find
// their target, whatever BTF is embedded, though the kernel has BTF: the
// boots with BTF hidden leave them out of the comparisons. On kernels
// built without BTF they are compared: the prediction must say fails.
var needsKernelBTF = map[string]bool{
	ebpf.Tracing.String():   true,
	ebpf.LSM.String():       true,
	ebpf.StructOps.String(): true,
	ebpf.Extension.String(): true,
}

// TestField boots every kernel of the shared corpus the way an agent
// meets it. A kernel with BTF is booted twice, with its BTF hidden (a
// kernel without BTF) and visible; a kernel built without BTF (nobtf/,
// Debian's 686-pae with $BTFEMBED_FETCH) once, as it is, with nothing
// hidden. The guest selects BTF with runtime's CollectionOptions(nil),
// nothing forced, from a payload the generator made for the corpus and the
// objects, loads every program of every object with it, and runs the
// execsnoop example, built with that payload. Without the kernel's BTF the
// selector must pick the embedded entry by uname and os-release; every
// program that loads with the kernel's BTF must load with the embedded
// BTF; execsnoop must report the guest's exec with the right pid, parent
// pid and comm. On the kernel of the .deb, the guest first loads
// nf_conntrack and its dependencies, and a kprobe reading nf_conntrack's
// module types must load with the embedded module BTF. Each boot's
// verdicts are also compared with package predict's (prediction_test.go):
// a contradiction fails the test, and the counts are logged per kernel and
// in total.
func TestField(t *testing.T) {
	dir := kerneltest.SharedCorpus(t)
	total := &matchTotal{}
	t.Cleanup(func() { total.log(t) })
	for _, k := range fieldKernels {
		t.Run(k.name(), func(t *testing.T) {
			vmtest.Require(t, k.arch)
			var extra *fetched
			if k.source == fromArchive {
				deb := kerneltest.Debian686PAE(t)
				k.release = deb.Release
				extra = &fetched{deb: deb.Image, dwarf: deb.Dbg}
			}
			t.Parallel()
			if k.source == fromBuild {
				// Built after t.Parallel: the first build takes minutes,
				// which the other kernels' boots need not wait for.
				built := kerneltest.Ubuntu1804Kernel(t)
				k.release = built.Release
				extra = &fetched{kernel: built.Image, dwarf: built.VMLinux}
			}
			if k.source == fromVendor {
				dir := kerneltest.VendorDir()
				extra = &fetched{kernel: filepath.Join(dir, "vmlinuz-"+k.release), entry: corpus.KernelPath(filepath.Join(dir, "btfhub"), vendorKey)}
			}
			fx, err := fieldFixture(dir)
			if err != nil {
				t.Fatal(err)
			}
			if k.source == fromDWARF && fx.nobtfErr != nil {
				t.Skip(fx.nobtfErr)
			}
			if extra != nil {
				err := extra.prepare(t.Context(), fx, k)
				if errors.Is(err, pahole.ErrNotFound) || errors.Is(err, pahole.ErrTooOld) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			m, err := fx.machine(t, dir, k, extra)
			if err != nil {
				t.Fatal(err)
			}
			var boots []fieldBoot
			if k.ownBTF() {
				hidden, visible := bootBoth(t, m)
				boots = []fieldBoot{{sideVisible, visible}, {sideHidden, hidden}}
			} else {
				b, err := vmtest.Run(t.Context(), &m)
				if err != nil {
					t.Fatal(err)
				}
				boots = []fieldBoot{{sideNone, b}}
			}
			if *fieldOut != "" {
				if err := writeResult(*fieldOut, k, boots); err != nil {
					t.Error(err)
				}
			}
			for _, p := range checkField(k, boots) {
				t.Error(p)
			}
			t.Log(summary(k, boots))
			total.addKernel(k, checkPredictions(t, fx, extra, k, boots))
		})
	}
}

// side is how a boot shows the kernel's BTF.
type side uint8

const (
	sideVisible side = iota // the kernel's own BTF
	sideHidden              // the kernel's BTF hidden under a tmpfs
	sideNone                // a kernel built without BTF
)

var sideNames = [...]string{"kernel BTF", "BTF hidden", "no BTF"}

func (s side) String() string { return sideNames[s] }

// fieldBoot is one boot of a kernel.
type fieldBoot struct {
	side side
	boot *vmtest.Boot
}

var fieldOut = flag.String("field.out", "", "write each kernel's per-program verdicts as JSON (vmtest.FieldResult) into this directory")

// writeResult writes kernel k's verdicts into dir.
func writeResult(dir string, k fieldKernel, boots []fieldBoot) error {
	res := vmtest.FieldResult{Kernel: k.name(), Arch: k.arch, Release: k.release}
	for _, b := range boots {
		out := &res.Embedded
		if b.side == sideVisible {
			out = &res.KernelBTF
		}
		for _, rec := range b.boot.Find(vmtest.KindProgramLoad) {
			var p vmtest.ProgramLoad
			if err := rec.Decode(&p); err != nil {
				return err
			}
			*out = append(*out, p)
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

// mustLoad are programs that load on every kernel with any BTF, so that
// the comparison is never vacuous: execsnoop (with ring buffers) and the
// feature objects' controls; the kprobe into nf_conntrack's types needs
// the module, loaded only on the deb's kernel.
func mustLoad(k fieldKernel) []string {
	var progs []string
	if k.member == "" { // the family test boots the agent's object alone
		progs = []string{"control-el.o/control_kprobe", "control-el.o/control_tracepoint"}
	}
	if k.ringbuf() {
		progs = append(progs, k.execsnoopObject()+"/handle_exec")
	}
	if k.source == fromDeb {
		progs = append(progs, "conntrack_kprobe-el.o/ct_delete_kprobe")
	}
	return progs
}

// checkField checks each boot of kernel k, and compares the boots with
// BTF hidden and visible; it returns every problem.
func checkField(k fieldKernel, boots []fieldBoot) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	runs := map[side]*fieldRun{}
	for _, b := range boots {
		r, err := decodeRun(b.boot)
		if err != nil {
			bad("%s: %v", b.side, err)
			continue
		}
		runs[b.side] = r
		for _, p := range checkRun(k, b.side, r) {
			bad("%s: %s", b.side, p)
		}
	}
	hidden, visible := runs[sideHidden], runs[sideVisible]
	if hidden != nil && visible != nil && hidden.sel.Error == "" && visible.sel.Error == "" {
		// Whatever loads with the kernel's own BTF must load with the
		// BTF selected without it.
		for _, key := range sortedKeys(visible.programs) {
			v, h := visible.programs[key], hidden.programs[key]
			switch {
			case h.Program == "":
				bad("%s: tried with BTF visible only", key)
			case needsKernelBTF[v.Type]:
				// Attaches by BTF ID: cannot load with the BTF hidden.
			case v.Loaded && !h.Loaded:
				bad("%s (%s) loads with the kernel's BTF, not with the embedded BTF: %s", key, v.Section, h.Error)
			}
		}
		if len(hidden.programs) != len(visible.programs) {
			bad("%d programs tried with BTF hidden, %d visible", len(hidden.programs), len(visible.programs))
		}
	}
	slices.Sort(problems)
	return problems
}

// checkRun checks one boot of kernel k: the kernel, the selection, the
// programs that must load and execsnoop's event.
func checkRun(k fieldKernel, s side, r *fieldRun) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if r.host.Release != k.release || r.host.KernelBTF != k.ownBTF() {
		bad("booted %s (/sys/kernel/btf/vmlinux: %v), want %s (%v)", r.host.Release, r.host.KernelBTF, k.release, k.ownBTF())
	}
	if r.host.Hidden != (s == sideHidden) {
		bad("BTF hidden %v", r.host.Hidden)
	}
	for _, m := range r.modules {
		if m.Error != "" {
			bad("module %s: %s", m.Name, m.Error)
		}
	}
	which, entry := "embedded", k.release
	if k.member != "" {
		which, entry = "family", k.member
	}
	if s == sideVisible {
		which = "kernel"
		if r.sel.Error != "" || r.sel.Source != "kernel" {
			bad("selected %+v, want the kernel's BTF", r.sel)
		}
	} else if e := r.sel; e.Error != "" || e.Source != which || e.Release != entry || e.Distro != k.distro || e.Version != k.version {
		bad("selected %+v, want the %s entry %s %s %s", e, which, k.distro, k.version, entry)
	} else if k.member != "" && !strings.HasPrefix(e.Family, k.release+" is not embedded") {
		bad("family selection without its reason: %+v", e)
	}
	if k.source == fromDeb && s != sideVisible && !slices.Contains(r.sel.Modules, debModule) {
		bad("embedded modules %v, want %s", r.sel.Modules, debModule)
	}
	if r.sel.Error != "" {
		return problems // the guest loaded nothing
	}
	for _, key := range mustLoad(k) {
		if p := r.programs[key]; !p.Loaded {
			bad("%s does not load: %s", key, p.Error)
		}
	}
	e := r.execsnoop
	if !k.ringbuf() {
		if e.Error == "" || e.Pid != 0 {
			bad("execsnoop: %+v, want it to fail without ring buffers", e)
		}
		return problems
	}
	if e.Error != "" || !strings.Contains(e.Banner, "BTF from "+which) ||
		e.Pid != e.WantPid || e.Ppid != e.WantPpid || e.Comm != path.Base(vmtest.FieldExecChild) {
		bad("execsnoop: %+v, want BTF from %s and comm %s", e, which, path.Base(vmtest.FieldExecChild))
	}
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

// summary is the line the test logs per kernel: what loaded on each boot,
// and the boot times.
func summary(k fieldKernel, boots []fieldBoot) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (%s):", k.name(), k.release)
	for _, b := range boots {
		r, err := decodeRun(b.boot)
		if err != nil {
			continue
		}
		var names []string
		for _, key := range sortedKeys(r.programs) {
			if r.programs[key].Loaded {
				names = append(names, key)
			}
		}
		fmt.Fprintf(&sb, "\n  %s: %d/%d programs loaded; boot to /init %.1fs, total %.1fs\n    %s",
			b.side, len(names), len(r.programs), b.boot.UntilInit.Seconds(), b.boot.Total.Seconds(), strings.Join(names, " "))
	}
	return sb.String()
}

// fixture is what every boot shares, made once per test binary.
type fixture struct {
	corpusDir string
	// objectPaths are the objects the payload is generated for.
	objectPaths []string
	payload     []byte
	objects     []vmtest.File
	// archObjects are the objects of one architecture (execsnoop's).
	archObjects map[string]vmtest.File
	// debImage and debModules come from the distribution package:
	// the kernel image and debModule with its dependencies, in load order.
	debImage   []byte
	debModules []vmtest.File
	// conntrack is the deb's nf_conntrack, paired in the payload with
	// testdata's vmlinux BTF of the same kernel.
	conntrack []byte
	// nobtfEntry is the corpus file imported from nobtf's DWARF; nil,
	// with nobtfErr saying why, where pahole is missing or too old.
	nobtfEntry []byte
	nobtfErr   error
	// corpus is the full BTF the payload was generated from, by
	// corpusKey, for the predictions the boots are compared with.
	corpus map[string]*corpus.Kernel

	builds sync.Map // arch and payload digest -> *archBuild
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

// Keys of the corpus entries the fixture adds to testdata's.
var (
	debKey   = kernelkey.Key{Distro: "debian", Version: "12", Arch: "x86_64", Release: "6.1.0-50-cloud-amd64"}
	olderKey = kernelkey.Key{Distro: "debian", Version: "11", Arch: "x86_64", Release: "5.10.0-32-amd64"}
	nobtfKey = kernelkey.Key{Distro: "debian", Version: "12", Arch: "x86_64", Release: "6.1.176"}
	// vendorKey is testdata/vendorkernel's entry.
	vendorKey = kernelkey.Key{Distro: "centos", Version: "8", Arch: "x86_64", Release: kerneltest.VendorRelease}
)

func newFixture(corpusDir string) (*fixture, error) {
	fx := &fixture{corpusDir: corpusDir}
	deb := filepath.Join(corpusDir, debPackage)
	image, modules, err := debKernel(deb, debKey.Release, debModule)
	if err != nil {
		return nil, err
	}
	fx.debImage = image
	for i, m := range modules {
		fx.debModules = append(fx.debModules, vmtest.File{
			Path: fmt.Sprintf("%s/%02d-%s.ko", vmtest.FieldModules, i, m.name), Mode: 0o644, Data: m.data,
		})
	}
	fx.conntrack = modules[len(modules)-1].data
	vmlinux := filepath.Join(corpusDir, nobtfDir, "vmlinux-"+nobtfKey.Release+".xz")
	fx.nobtfEntry, err = dwarfkernel.Entry(context.Background(), vmlinux, nobtfKey)
	if errors.Is(err, pahole.ErrNotFound) || errors.Is(err, pahole.ErrTooOld) {
		// The kernel without BTF is skipped, saying why; the others boot.
		fx.nobtfErr, err = err, nil
	}
	if err != nil {
		return nil, err
	}

	objects, err := filepath.Glob(repoPath("testdata", "objects", "*-el.o"))
	if err != nil {
		return nil, err
	}
	features, err := filepath.Glob(repoPath("testdata", "objects", "features", "*-el.o"))
	if err != nil {
		return nil, err
	}
	objects = append(objects, features...)
	objects = append(objects, repoPath("internal", "vmtest", "testdata", "conntrack_kprobe-el.o"),
		repoPath("internal", "vmtest", "testdata", "rodata_bystander-el.o"))
	fx.archObjects = map[string]vmtest.File{}
	for _, k := range fieldKernels {
		objects = append(objects, repoPath("examples", "execsnoop", k.execsnoopObject()))
	}
	slices.Sort(objects)
	fx.objectPaths = slices.Compact(objects)
	names := map[string]string{}
	for _, o := range fx.objectPaths {
		if other, ok := names[filepath.Base(o)]; ok {
			return nil, fmt.Errorf("objects %s and %s have one name in the guest", other, o)
		}
		names[filepath.Base(o)] = o
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
	fx.payload, fx.corpus, err = fx.generate(nil)
	return fx, err
}

// extraRoot is a corpus root holding one more kernel: its corpus file, and
// its module files by name.
type extraRoot struct {
	key     kernelkey.Key
	entry   []byte            // a BTFHub archive; nil: modules only
	modules map[string][]byte // name.ko -> contents
}

// generate makes the payload for the objects and the corpus: testdata's
// kernels with their modules, the deb's nf_conntrack, Debian 11's 5.10
// from the shared corpus, the entry imported from nobtf's DWARF, and the
// extra roots. It also reads that corpus, with full BTF, by corpusKey.
func (fx *fixture) generate(extra []extraRoot) ([]byte, map[string]*corpus.Kernel, error) {
	older, err := os.ReadFile(filepath.Join(fx.corpusDir, "btfhub", olderKey.Distro, olderKey.Version, olderKey.Arch, olderKey.Release+".btf.tar.xz"))
	if err != nil {
		return nil, nil, err
	}
	base := []extraRoot{
		{key: debKey, modules: map[string][]byte{debModule + ".ko": fx.conntrack}},
		{key: olderKey, entry: older},
	}
	if fx.nobtfEntry != nil {
		base = append(base, extraRoot{key: nobtfKey, entry: fx.nobtfEntry})
	}
	extra = append(base, extra...)
	tmp, err := os.MkdirTemp("", "btfembed-field-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	roots := []string{repoPath("testdata", "btfhub"), repoPath("testdata", "corpus-extra")}
	for i, e := range extra {
		root := filepath.Join(tmp, strconv.Itoa(i))
		if e.entry != nil {
			if err := writeFile(corpus.KernelPath(root, e.key), e.entry); err != nil {
				return nil, nil, err
			}
		}
		for name, data := range e.modules {
			if err := writeFile(filepath.Join(corpus.ModulesPath(root, e.key), name), data); err != nil {
				return nil, nil, err
			}
		}
		roots = append(roots, root)
	}
	res, err := generator.Generate(context.Background(), &generator.Args{
		Objects: fx.objectPaths,
		Corpus:  roots,
		Strict:  true,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("generate the payload: %w", err)
	}
	payload, err := res.Payload()
	if err != nil {
		return nil, nil, err
	}
	kernels, err := readCorpus(roots)
	return payload, kernels, err
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// fetched is a kernel without BTF that is not in the shared corpus
// (Debian's 686-pae, the 4.15 built here, the vendor-released kernel),
// made ready for its boot: its image, the entry imported from its DWARF,
// and a payload and corpus that hold it besides the fixture's kernels.
type fetched struct {
	// deb is the package holding the image (Debian's 686-pae), or
	// kernel the image's path (a kernel built here).
	deb, kernel string
	dwarf       string // what the entry is imported from: a -dbg package, a vmlinux
	entry       string // or the entry's path, imported already
	image       []byte // from deb
	payload     []byte
	corpus      map[string]*corpus.Kernel
}

// prepare imports the kernel's DWARF and generates its payload.
func (f *fetched) prepare(ctx context.Context, fx *fixture, k fieldKernel) error {
	key := kernelkey.Key{Distro: k.distro, Version: k.version, Arch: k.arch, Release: k.release}
	if f.deb != "" {
		image, _, err := debKernel(f.deb, k.release, "")
		if err != nil {
			return err
		}
		f.image = image
	}
	var entry []byte
	var err error
	if f.entry != "" {
		entry, err = os.ReadFile(f.entry)
	} else {
		entry, err = dwarfkernel.Entry(ctx, f.dwarf, key)
	}
	if err != nil {
		return err
	}
	f.payload, f.corpus, err = fx.generate([]extraRoot{{key: key, entry: entry}})
	return err
}

// build returns /init and execsnoop for arch, built once per payload:
// execsnoop embeds payload in place of its committed one, as a user who
// generated it for their own kernels would have it.
func (fx *fixture) build(arch string, payload []byte) (init, execsnoop []byte, err error) {
	sum := sha256.Sum256(payload)
	v, _ := fx.builds.LoadOrStore(arch+"/"+hex.EncodeToString(sum[:]), &archBuild{})
	b := v.(*archBuild)
	b.once.Do(func() {
		ctx := context.Background()
		if b.init, b.err = vmtest.Build(ctx, "github.com/btfembed/btfembed/internal/vmtest/fieldinit", arch); b.err != nil {
			return
		}
		goarch, err := vmtest.GOARCH(arch)
		if err != nil {
			b.err = err
			return
		}
		file, ok := execsnoopPayloads[goarch]
		if !ok {
			b.err = fmt.Errorf("examples/execsnoop embeds no payload for GOARCH %s", goarch)
			return
		}
		replace := map[string][]byte{repoPath("examples", "execsnoop", file): payload}
		p, err := payloadfmt.Open(payload)
		if err != nil {
			b.err = err
			return
		}
		if p.HasModules() {
			// go generate imports runtime/modules in the Go file it writes
			// beside a payload with module BTF; the committed Go file was
			// written for the committed payload, which has none.
			replace[repoPath("examples", "execsnoop", "kernelbtf_modules.go")] = []byte("package main\n\nimport _ \"github.com/btfembed/btfembed/runtime/modules\"\n")
		}
		b.execsnoop, b.err = vmtest.BuildWith(ctx, "github.com/btfembed/btfembed/examples/execsnoop", arch, replace)
	})
	return b.init, b.execsnoop, b.err
}

// execsnoopPayloads are the payload files examples/execsnoop embeds, by
// GOARCH (its kernelbtf_<goarch>.go files' build constraints).
var execsnoopPayloads = map[string]string{
	"amd64": "kernelbtf_amd64.btfembed",
	"arm64": "kernelbtf_arm64.btfembed",
	"386":   "kernelbtf_other.btfembed",
}

// machine is the boot of kernel k with the field test's initramfs.
func (fx *fixture) machine(t *testing.T, corpusDir string, k fieldKernel, extra *fetched) (vmtest.Machine, error) {
	payload := fx.payload
	if extra != nil {
		payload = extra.payload
	}
	init, execsnoop, err := fx.build(k.arch, payload)
	if err != nil {
		return vmtest.Machine{}, err
	}
	files := []vmtest.File{
		{Path: "init", Mode: 0o755, Data: init},
		{Path: vmtest.FieldExecChild, Mode: os.ModeSymlink | 0o777, Data: []byte("/init")},
		{Path: vmtest.FieldExecsnoopBin, Mode: 0o755, Data: execsnoop},
		{Path: vmtest.FieldOSRelease, Mode: 0o644, Data: []byte(osRelease(k.distro, k.version))},
		{Path: vmtest.FieldPayload, Mode: 0o644, Data: payload},
	}
	files = append(files, fx.objects...)
	files = append(files, fx.archObjects[k.arch])
	// Each guest parses its kernel's 5 MB BTF twice with it visible, slow
	// under TCG: an arm64 guest took 100 s on a loaded 2-core machine.
	timeout := 4 * time.Minute
	kernel := filepath.Join(corpusDir, "images", "vmlinuz-"+k.release)
	var image []byte
	switch k.source {
	case fromDeb:
		files = append(files, fx.debModules...)
		image = fx.debImage
	case fromDWARF:
		kernel = filepath.Join(corpusDir, nobtfDir, "vmlinuz-"+k.release)
	case fromArchive:
		image = extra.image
		timeout = 6 * time.Minute
	case fromBuild, fromVendor:
		kernel = extra.kernel
	}
	if image != nil {
		kernel = filepath.Join(t.TempDir(), "vmlinuz-"+k.release)
		if err := os.WriteFile(kernel, image, 0o644); err != nil {
			return vmtest.Machine{}, err
		}
	}
	return vmtest.Machine{Arch: k.arch, Kernel: kernel, Initramfs: files, Timeout: timeout}, nil
}

// debFile is one module of a package.
type debFile struct {
	name string
	data []byte
}

// debKernel takes release's kernel image and module with its dependencies
// (modinfo's depends=, recursively) out of a kernel package, dependencies
// first; no module if module is empty.
func debKernel(deb, release, module string) (image []byte, modules []debFile, err error) {
	f, err := os.Open(deb)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	byName := map[string][]byte{}
	modPrefix := "lib/modules/" + release + "/"
	err = extract.DebFiles(f, func(p string) bool {
		return p == "boot/vmlinuz-"+release || (module != "" && strings.HasPrefix(p, modPrefix) && strings.HasSuffix(p, ".ko"))
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
	if module == "" {
		return image, nil, nil
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

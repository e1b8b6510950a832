package vmtest_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vmtest"
)

// Debian 12's -amd64 builds the family test fetches from Debian's archive
// (kerneltest.DebianAmd64): the shared corpus holds one build per flavour
// (6.1.0-47-amd64, 6.1.0-50-cloud-amd64), no family of two.
var familyDebs = []string{"6.1.0-50-amd64", "6.1.0-53-amd64", "6.1.0-54-amd64"}

// TestFieldFamily proves, as an agent meets it, that a Debian build its
// payload does not embed is served by its family's BTF. The payload is
// execsnoop's, generated for its x86 object from a corpus of Debian 12
// -amd64 builds (testdata's 6.1.0-47-amd64 and the fetched packages'
// kernels, imported as a user imports them) that leaves the booted build
// out:
//
//   - 6.1.0-47-amd64, the shared corpus's image, from a corpus of
//     6.1.0-50 and 6.1.0-53: older than every member, served by 6.1.0-50;
//   - 6.1.0-54-amd64, the newest package's image, from a corpus of
//     6.1.0-47, 6.1.0-50 and 6.1.0-53: a build released after the
//     payload, served by 6.1.0-53.
//
// Each is booted with its BTF hidden and the family not allowed: the
// selection must fail, saying the family would serve. Then with its BTF
// hidden and visible, the family allowed (fieldinit selects with
// SelectOptions.AllowFamily and runs execsnoop with -family). Hidden, the guest must select the family's member and
// say why; handle_exec must load as it does with the kernel's own BTF, and
// execsnoop must report the guest's exec with the right pid, parent pid
// and comm, which it reads from task_struct through CO-RE.
//
// Before booting, it checks what is assumed on the real builds: the
// report over all four builds finds the family stable for execsnoop, and
// not for testdata's bitfields-el.o, whose task_struct bitfields moved by
// a bit between 6.1.0-47 and 6.1.0-50 (a stable backport added one).
func TestFieldFamily(t *testing.T) {
	vmtest.Require(t, "x86_64")
	dir := kerneltest.SharedCorpus(t)
	debs := kerneltest.DebianAmd64(t, familyDebs...)
	fx, err := fieldFixture(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Every build in a corpus root of its own, to choose from: the
	// packages' as `btfembed corpus import` writes them.
	roots := map[string]string{"6.1.0-47-amd64": filepath.Join(kerneltest.Dir(), "btfhub")}
	for _, release := range familyDebs {
		root := t.TempDir()
		_, err := corpus.Import(t.Context(), root, []string{debs[release]}, &corpus.ImportOptions{
			Key: kernelkey.Key{Distro: "debian", Version: "12"}, NoModules: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(corpus.KernelPath(root, kernelkey.Key{Arch: "x86_64", Release: release, Distro: "debian", Version: "12"})); err != nil {
			t.Fatalf("import of %s: %v", release, err)
		}
		roots[release] = root
	}
	execsnoop := repoPath("examples", "execsnoop", "bpf_x86_bpfel.o")
	generate := func(t *testing.T, object string, releases ...string) *generator.Result {
		t.Helper()
		var rs []string
		for _, r := range releases {
			rs = append(rs, roots[r])
		}
		// testdata's root holds other kernels (-cloud-amd64, 6.12):
		// only the -amd64 builds.
		res, err := generator.Generate(context.Background(), &generator.Args{
			Objects: []string{object}, Corpus: rs, Arch: []string{"x86_64"}, Kernels: "6.1.0-[0-9]*[0-9]-amd64", Strict: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range res.Report.Kernels {
			got = append(got, k.Release)
		}
		if !slices.Equal(got, releases) {
			t.Fatalf("generated for %v, want %v", got, releases)
		}
		return res
	}

	t.Run("stable", func(t *testing.T) {
		all := append([]string{"6.1.0-47-amd64"}, familyDebs...)
		for _, tc := range []struct {
			object string
			why    string // "" for stable
		}{
			{execsnoop, ""},
			{filepath.Join(kerneltest.Dir(), "objects", "bitfields-el.o"), "6.1.0-50-amd64 relocates the objects otherwise than 6.1.0-47-amd64"},
		} {
			fams := generate(t, tc.object, all...).Report.Families
			if len(fams) != 1 || fams[0].Family != "debian 12 x86_64 6.1.0-*-amd64" || !slices.Equal(fams[0].Members, all) || fams[0].Stable != (tc.why == "") || fams[0].Why != tc.why {
				t.Errorf("%s: families %+v, want one of %v, why %q", filepath.Base(tc.object), fams, all, tc.why)
			}
		}
	})

	for _, tc := range []struct {
		boot, member string
		corpus       []string
	}{
		{"6.1.0-47-amd64", "6.1.0-50-amd64", []string{"6.1.0-50-amd64", "6.1.0-53-amd64"}},
		{"6.1.0-54-amd64", "6.1.0-53-amd64", []string{"6.1.0-47-amd64", "6.1.0-50-amd64", "6.1.0-53-amd64"}},
	} {
		t.Run(tc.boot, func(t *testing.T) {
			t.Parallel()
			res := generate(t, execsnoop, tc.corpus...)
			if fams := res.Report.Families; len(fams) != 1 || !fams[0].Stable {
				t.Fatalf("families %+v, want a stable one", fams)
			}
			payload, err := res.Payload()
			if err != nil {
				t.Fatal(err)
			}
			k := fieldKernel{release: tc.boot, arch: "x86_64", distro: "debian", version: "12", member: tc.member}
			kernel := filepath.Join(dir, "images", "vmlinuz-"+tc.boot) // the shared corpus's
			if slices.Contains(familyDebs, tc.boot) {
				image, _, err := debKernel(debs[tc.boot], tc.boot, "")
				if err != nil {
					t.Fatal(err)
				}
				kernel = filepath.Join(t.TempDir(), "vmlinuz-"+tc.boot)
				if err := os.WriteFile(kernel, image, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			init, execsnoopBin, err := fx.build(k.arch, payload)
			if err != nil {
				t.Fatal(err)
			}
			m := vmtest.Machine{
				Arch:   k.arch,
				Kernel: kernel,
				Initramfs: []vmtest.File{
					{Path: "init", Mode: 0o755, Data: init},
					{Path: vmtest.FieldExecChild, Mode: os.ModeSymlink | 0o777, Data: []byte("/init")},
					{Path: vmtest.FieldExecsnoopBin, Mode: 0o755, Data: execsnoopBin},
					{Path: vmtest.FieldOSRelease, Mode: 0o644, Data: []byte(osRelease(k.distro, k.version))},
					{Path: vmtest.FieldPayload, Mode: 0o644, Data: payload},
					fx.archObjects[k.arch],
				},
				Timeout: 4 * time.Minute,
			}
			// Never silently: not allowed, the family serves nothing, and
			// the error says it would.
			notAllowed := m
			notAllowed.Cmdline = []string{vmtest.FieldHideBTF}
			b, err := vmtest.Run(t.Context(), &notAllowed)
			if err != nil {
				t.Fatal(err)
			}
			want := "SelectOptions.AllowFamily would use " + tc.member + "'s BTF"
			if r, err := decodeRun(b); err != nil || !strings.Contains(r.sel.Error, want) || !strings.Contains(r.sel.Error, "kernel not supported") {
				t.Errorf("family not allowed: selection %+v, %v; want an error saying %q", r.sel, err, want)
			}
			m.Cmdline = []string{vmtest.FieldAllowFamily}
			hidden, visible := bootBoth(t, m)
			boots := []fieldBoot{{sideVisible, visible}, {sideHidden, hidden}}
			for _, p := range checkField(k, boots) {
				t.Error(p)
			}
			t.Log(summary(k, boots))
			if r, err := decodeRun(hidden); err == nil {
				t.Logf("execsnoop, BTF hidden: %s", r.execsnoop.Banner)
				if !strings.Contains(r.execsnoop.Banner, "BTF from family") {
					t.Errorf("execsnoop does not say it uses the family's BTF: %s", r.execsnoop.Banner)
				}
			}
		})
	}
}

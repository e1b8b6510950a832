package runtime

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// TestSelectBTFFile selects with a BTF file the user supplies, a real
// kernel's (6.1.0-47-amd64's full BTF from testdata/btfhub), on a host
// whose kernel has BTF of its own and whose release is embedded: the file
// comes ahead of both, named by SelectOptions.BTFFile or, failing that,
// by $BTFEMBED_BTF_FILE.
func TestSelectBTFFile(t *testing.T) {
	a, byRelease := selectPayload(t)
	full := kerneltest.ByName(t, "debian/12/x86_64/6.1.0-47-amd64")
	file := filepath.Join(t.TempDir(), "vmlinux.btf")
	writeFile(t, file, full.BTF)
	root := hostRoot(t, "etc/os-release", "ID=debian\nVERSION_ID=12\n")
	writeFile(t, filepath.Join(root, "sys/kernel/btf/vmlinux"), byRelease["6.12.118+deb12-amd64"].VMLinux)
	host := SelectOptions{HostRoot: root, Arch: "x86_64", Release: "6.1.0-47-amd64"}
	want := typeNames(t, loadRaw(t, full.BTF))

	for _, c := range []struct {
		name       string
		file, env  string
		force      bool
		wantSource Source
		wantErr    string
	}{
		{name: "option", file: file, wantSource: SourceFile},
		{name: "environment", env: file, wantSource: SourceFile},
		{name: "option over environment", file: file, env: "/nonexistent/vmlinux.btf", wantSource: SourceFile},
		{name: "ForceEmbedded ignores the environment", env: file, force: true, wantSource: SourceEmbedded},
		{name: "ForceEmbedded with the option", file: file, force: true, wantErr: "both BTFFile and ForceEmbedded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(BTFFileEnv, c.env)
			opts := host
			opts.BTFFile, opts.ForceEmbedded = c.file, c.force
			co, sel, err := a.CollectionOptions(&opts)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.Source != c.wantSource {
				t.Fatalf("selected %s", describe(sel))
			}
			if c.wantSource != SourceFile {
				return
			}
			if sel.File != file || sel.Key != (Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian", Version: "12"}) {
				t.Errorf("file %q, key %s; want %q and the running kernel's key", sel.File, sel.Key, file)
			}
			if sel.Predicted || sel.Predictions != nil {
				t.Errorf("a user's file predicted %v", sel.Predictions)
			}
			if co.Programs.KernelTypes != sel.Spec {
				t.Error("KernelTypes is not the file's BTF")
			}
			if !slices.Equal(typeNames(t, sel.Spec), want) {
				t.Error("selected BTF is not the file's")
			}
		})
	}
}

// TestSelectBTFFileHostile gives Select files that are not BTF it can use:
// each is an error that names the file and says what is wrong, and Select
// falls back on nothing, though the kernel has BTF and its release is
// embedded; none hangs.
func TestSelectBTFFileHostile(t *testing.T) {
	a, byRelease := selectPayload(t)
	kernelBTF := byRelease["6.1.0-47-amd64"].VMLinux
	root := hostRoot(t, "etc/os-release", "ID=debian\nVERSION_ID=12\n")
	writeFile(t, filepath.Join(root, "sys/kernel/btf/vmlinux"), kernelBTF)
	for _, c := range []struct {
		name    string
		make    func(t *testing.T, path string)
		wantErr string
		is      error
	}{
		{name: "missing", make: func(*testing.T, string) {}, wantErr: "no such file", is: fs.ErrNotExist},
		{name: "FIFO", make: mkfifo, wantErr: "not a regular file"},
		{name: "directory", make: mkdir, wantErr: "not a regular file"},
		{name: "symlink to BTF", make: func(t *testing.T, p string) {
			writeFile(t, p+".real", kernelBTF)
			if err := os.Symlink(filepath.Base(p)+".real", p); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "a symbolic link"},
		{name: "dangling symlink", make: danglingSymlink, wantErr: "a symbolic link"},
		{name: "empty", make: regular(nil), wantErr: "BTF file"},
		{name: "garbage", make: regular([]byte("\x9f\xeb\x01\x00garbage")), wantErr: "BTF file"},
		{name: "ELF vmlinux", make: regular([]byte("\x7fELF\x02\x01\x01\x00 and the rest")), wantErr: "an ELF file, not raw BTF"},
		{name: "BTFHub archive", make: regular([]byte("\xfd7zXZ\x00\x00 and the rest")), wantErr: "xz-compressed, not raw BTF"},
		{name: "too large", make: func(t *testing.T, p string) {
			writeFile(t, p, nil)
			if err := os.Truncate(p, maxBTFFile+1); err != nil { // sparse
				t.Fatal(err)
			}
		}, wantErr: "more than 32768 KiB"},
		{name: "65,535 members naming one 64 KiB string", make: regular(payloadtest.NameFlood(1, 65_535, 64<<10)), wantErr: "a BTF file may take 512 MiB decoded"},
		{name: "a chain of 200,000 pointers", make: regular(payloadtest.PointerChain(200_000)), wantErr: "deep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vmlinux.btf")
			c.make(t, path)
			sel, err := a.Select(&SelectOptions{HostRoot: root, Arch: "x86_64", Release: "6.1.0-47-amd64", BTFFile: path})
			if err == nil {
				t.Fatalf("selected %s", describe(sel))
			}
			if sel != nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("%s, %v; want no selection and an error naming %s and containing %q", describe(sel), err, path, c.wantErr)
			}
			t.Log(err)
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v does not wrap %v", err, c.is)
			}
			if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrKernelNotSupported) {
				t.Errorf("error %v says the payload is corrupt or the kernel not supported; the file is at fault", err)
			}
		})
	}
}

// TestSelectBTFFileModules: the embedded entry's distilled module
// (cilium/ebpf's btf_testmod) is relocated onto a BTF file's vmlinux BTF,
// as onto the kernel's own, and handed to cilium/ebpf with it.
func TestSelectBTFFileModules(t *testing.T) {
	e := moduleEntry(t, true)
	a := openBudget(t, payloadtest.Encode(t, []encode.Entry{e}, nil), fullBudget)
	file := filepath.Join(t.TempDir(), "vmlinux.btf")
	writeFile(t, file, e.VMLinux)
	co, sel, err := a.CollectionOptions(&SelectOptions{HostRoot: t.TempDir(), BTFFile: file, Arch: e.Key.Arch, Release: e.Key.Release, Distro: "debian"})
	if err != nil {
		t.Fatal(err)
	}
	mod := sel.Modules["bpf_testmod"]
	if sel.Source != SourceFile || mod == nil || co.Programs.KernelTypes != sel.Spec ||
		len(co.Programs.ExtraRelocationTargets) != 1 || co.Programs.ExtraRelocationTargets[0] != mod {
		t.Fatalf("%s, modules %v, options %+v; want the file's BTF and the module relocated onto it", describe(sel), sel.Modules, co.Programs)
	}
	var ops *btf.Struct
	if err := mod.TypeByName("bpf_testmod_ops", &ops); err != nil {
		t.Fatal(err)
	}
}

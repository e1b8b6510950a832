package runtime

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// selectPayload embeds the testdata kernels plus two entries that make
// distributions matter: 6.1.0-47-amd64 also "shipped by ubuntu 22.04" with
// other BTF (6.12's), 6.1.0-57-arm64 also by "raspbian" with the same BTF,
// and 6.1.0-50-cloud-amd64 by debian 12 and 12.5 with the same BTF and by
// ubuntu with other BTF.
func selectPayload(t testing.TB) (*Assets, map[string]encode.Entry) {
	t.Helper()
	byRelease := map[string]encode.Entry{}
	for _, e := range payloadtest.Entries(t) {
		byRelease[e.Key.Release] = e
	}
	ubuntu := encode.Entry{Key: Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "ubuntu", Version: "22.04"},
		VMLinux: byRelease["6.12.118+deb12-amd64"].VMLinux}
	raspbian := byRelease["6.1.0-57-arm64"]
	raspbian.Key.Distro = "raspbian"
	cloudPoint := byRelease["6.1.0-50-cloud-amd64"]
	cloudPoint.Key.Version = "12.5"
	cloudUbuntu := encode.Entry{Key: Key{Arch: "x86_64", Release: "6.1.0-50-cloud-amd64", Distro: "ubuntu", Version: "22.04"},
		VMLinux: byRelease["6.12.118+deb12-amd64"].VMLinux}
	entries := append(slices.Collect(maps.Values(byRelease)), ubuntu, raspbian, cloudPoint, cloudUbuntu)
	return open(t, payloadtest.Encode(t, entries, nil)), byRelease
}

// hostRoot makes a host file system with the given os-release content at
// path (relative), and returns its root.
func hostRoot(t *testing.T, path, content string) string {
	t.Helper()
	root := t.TempDir()
	if path != "" {
		writeFile(t, filepath.Join(root, path), []byte(content))
	}
	return root
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSelectEmbedded(t *testing.T) {
	a, _ := selectPayload(t)
	for _, c := range []struct {
		name      string
		opts      SelectOptions
		osRelease string // content of etc/os-release under HostRoot
		want      Key
		wantErr   string // substring of the error; it must wrap ErrKernelNotSupported
	}{
		{name: "uname spelling aarch64", opts: SelectOptions{Arch: "aarch64", Release: "6.1.0-57-arm64", Distro: "debian", Version: "12"},
			want: Key{Arch: "arm64", Release: "6.1.0-57-arm64", Distro: "debian", Version: "12"}},
		{name: "unique release, other distro", opts: SelectOptions{Arch: "x86_64", Release: "6.12.118+deb12-amd64", Distro: "centos"},
			want: Key{Arch: "x86_64", Release: "6.12.118+deb12-amd64", Distro: "debian", Version: "12"}},
		{name: "os-release picks ubuntu", opts: SelectOptions{Arch: "amd64", Release: "6.1.0-47-amd64"},
			osRelease: "NAME=\"Ubuntu\"\nID=ubuntu\nVERSION_ID=\"22.04\"\n", want: Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "ubuntu", Version: "22.04"}},
		{name: "os-release picks debian", opts: SelectOptions{Arch: "x86_64", Release: "6.1.0-47-amd64"},
			osRelease: "ID='debian'\nVERSION_ID='12'\n", want: Key{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "debian", Version: "12"}},
		{name: "same BTF under two distros", opts: SelectOptions{Arch: "arm64", Release: "6.1.0-57-arm64"},
			want: Key{Arch: "arm64", Release: "6.1.0-57-arm64", Distro: "debian", Version: "12"}},
		{name: "distro narrows to the same BTF", opts: SelectOptions{Arch: "x86_64", Release: "6.1.0-50-cloud-amd64", Distro: "debian", Version: "13"},
			want: Key{Arch: "x86_64", Release: "6.1.0-50-cloud-amd64", Distro: "debian", Version: "12"}},
		{name: "distro picks nothing", opts: SelectOptions{Arch: "x86_64", Release: "6.1.0-47-amd64", Distro: "fedora", Version: "40"},
			wantErr: "release is embedded for debian 12, ubuntu 22.04"},
		{name: "unknown release", opts: SelectOptions{Arch: "x86_64", Release: "5.4.0-1-generic", Distro: "ubuntu", Version: "20.04"},
			wantErr: "x86_64/5.4.0-1-generic (ubuntu 20.04): none of the 8 embedded kernels matches; to embed it, import its BTF into the agent's corpus"},
		{name: "unknown arch", opts: SelectOptions{Arch: "s390x", Release: "6.1.0-47-amd64"},
			wantErr: "kernel not supported: s390x/6.1.0-47-amd64: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.ForceEmbedded = true
			opts.HostRoot = hostRoot(t, "etc/os-release", c.osRelease)
			if c.osRelease == "" {
				opts.HostRoot = hostRoot(t, "", "")
			}
			sel, err := a.Select(&opts)
			if c.wantErr != "" {
				if !errors.Is(err, ErrKernelNotSupported) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want ErrKernelNotSupported containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.Source != SourceEmbedded || sel.Key != c.want {
				t.Fatalf("selected %s %s, want embedded %s", sel.Source, sel.Key, c.want)
			}
		})
	}
}

func TestSelectKernelUnderHostRoot(t *testing.T) {
	e := moduleEntry(t, false)
	a := open(t, payloadtest.Encode(t, []encode.Entry{e}, nil))
	root := hostRoot(t, "usr/lib/os-release", "ID=debian\nVERSION_ID=12\n")
	writeFile(t, filepath.Join(root, "sys/kernel/btf/vmlinux"), e.VMLinux)
	writeFile(t, filepath.Join(root, "sys/kernel/btf/bpf_testmod"), e.Modules[0].Split)
	opts := &SelectOptions{HostRoot: root, Arch: "x86_64", Release: "6.99"}
	co, sel, err := a.CollectionOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Source != SourceKernel || sel.Key != (Key{Arch: "x86_64", Release: "6.99", Distro: "debian", Version: "12"}) {
		t.Fatalf("selected %s %s", sel.Source, sel.Key)
	}
	if got, want := typeNames(t, sel.Spec), typeNames(t, loadRaw(t, e.VMLinux)); !slices.Equal(got, want) {
		t.Error("kernel spec is not the host root's vmlinux")
	}
	if sel.Modules["bpf_testmod"] == nil || co.Programs.KernelTypes != sel.Spec || len(co.Programs.ExtraRelocationTargets) != 1 {
		t.Errorf("module BTF under the host root not used: %v %+v", sel.Modules, co.Programs)
	}

	opts.ForceEmbedded = true
	if _, err := a.Select(opts); !errors.Is(err, ErrKernelNotSupported) {
		t.Errorf("forced embedded for a release not embedded: %v", err)
	}
}

func TestSelectRunningKernel(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("running kernel has no BTF: %v", err)
	}
	a := open(t, payloadtest.Encode(t, payloadtest.Entries(t), nil))
	co, sel, err := a.CollectionOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Source != SourceKernel || sel.Spec == nil {
		t.Fatalf("selected %s", sel.Source)
	}
	if co.Programs.KernelTypes != nil {
		t.Error("KernelTypes set for the kernel's own BTF; cilium/ebpf should load it with its modules")
	}
	if sel.Key.Arch == "" || sel.Key.Release == "" || func() string { a, _ := kernelkey.NormalizeArch(sel.Key.Arch); return a }() != sel.Key.Arch {
		t.Errorf("host key %s not filled from uname", sel.Key)
	}
}

// TestSelectKernelLacksModuleBTF covers a kernel with vmlinux BTF but no
// module BTF: the embedded distilled module is relocated onto the
// kernel's vmlinux BTF, which is read once.
func TestSelectKernelLacksModuleBTF(t *testing.T) {
	e := moduleEntry(t, true)
	a := openBudget(t, payloadtest.Encode(t, []encode.Entry{e}, nil), fullBudget)
	root := hostRoot(t, "etc/os-release", "ID=debian\n")
	vmlinux := filepath.Join(root, "sys/kernel/btf/vmlinux")
	writeFile(t, vmlinux, e.VMLinux)
	opts := &SelectOptions{HostRoot: root, Arch: e.Key.Arch, Release: e.Key.Release}

	var (
		co  *ebpf.CollectionOptions
		sel *Selection
		err error
	)
	if opens := countOpens(t, vmlinux, func() { co, sel, err = a.CollectionOptions(opts) }); opens != 1 {
		t.Errorf("vmlinux BTF opened %d times, want once", opens)
	}
	if err != nil {
		t.Fatal(err)
	}
	if sel.Source != SourceKernel || sel.Modules["bpf_testmod"] == nil || len(sel.moduleBTF) != 1 {
		t.Fatalf("module not relocated onto the kernel's BTF: %s %v", sel.Source, sel.Modules)
	}
	if len(co.Programs.ExtraRelocationTargets) != 1 || co.Programs.ExtraRelocationTargets[0] != sel.Modules["bpf_testmod"] {
		t.Errorf("relocated module not a relocation target: %+v", co.Programs)
	}
	// Only the module's blobs were decoded: the entry's own vmlinux BTF
	// serves no one here.
	if ae := a.loaded[e.Key]; ae == nil || ae.done || ae.spec != nil {
		t.Errorf("the embedded entry was loaded for its module: %+v", ae)
	}
	var ops *btf.Struct
	if err := sel.Modules["bpf_testmod"].TypeByName("bpf_testmod_ops", &ops); err != nil {
		t.Fatal(err)
	}
}

// countOpens runs do and counts the times path is opened meanwhile, by
// inotify. It watches closes too: each open is followed by its close, so
// no two events in a row are alike, and inotify merges none.
func countOpens(t *testing.T, path string, do func()) int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN|unix.IN_CLOSE); err != nil {
		t.Fatal(err)
	}
	do()
	opens := 0
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return opens
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if ev.Mask&unix.IN_OPEN != 0 {
				opens++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// hostState is one way a host file (vmlinux BTF or os-release) can be.
type hostState struct {
	name string
	make func(t *testing.T, path string) // nil: the file is absent
}

func regular(b []byte) func(*testing.T, string) {
	return func(t *testing.T, path string) { writeFile(t, path, b) }
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func danglingSymlink(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", path); err != nil {
		t.Fatal(err)
	}
}

// TestSelectHostTrees runs Select through HostRoot on every combination
// of a kernel BTF state, an os-release state and a release that is
// embedded once, twice (debian 12 and ubuntu 22.04, with different BTF)
// or not at all, and checks each outcome against what the package
// documentation promises. Whatever the tree, Select returns a Selection or
// an error, never both and never neither, and never hangs.
func TestSelectHostTrees(t *testing.T) {
	a, byRelease := selectPayload(t)
	kernelBTF := byRelease["6.12.118+deb12-amd64"].VMLinux

	vmlinuxStates := []hostState{
		{name: "no sys/kernel/btf"},
		{name: "no vmlinux", make: func(t *testing.T, p string) { mkdir(t, filepath.Dir(p)) }},
		{name: "valid vmlinux", make: regular(kernelBTF)},
		{name: "corrupt vmlinux", make: regular([]byte("\x9f\xeb\x01\x00garbage"))},
		{name: "empty vmlinux", make: regular(nil)},
		{name: "vmlinux FIFO", make: mkfifo},
		{name: "vmlinux directory", make: mkdir},
		{name: "vmlinux dangling symlink", make: danglingSymlink},
		{name: "btf is a file", make: func(t *testing.T, p string) { writeFile(t, filepath.Dir(p), []byte("x")) }},
	}
	osReleaseStates := []hostState{
		{name: "no os-release"},
		{name: "debian 12", make: regular([]byte("ID=debian\nVERSION_ID=\"12\"\n"))},
		{name: "ubuntu 22.04", make: regular([]byte("ID=ubuntu\nVERSION_ID=\"22.04\"\n"))},
		{name: "mint like ubuntu", make: regular([]byte("ID=linuxmint\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=\"21.3\"\n"))},
		{name: "os-release directory", make: mkdir},
		{name: "os-release FIFO", make: mkfifo},
		{name: "os-release garbage", make: regular([]byte("\x00\xff=\n==\n"))},
	}
	releases := []struct {
		name, release string
		embedded      int
	}{
		{"embedded once for debian only", "6.12.118+deb12-amd64", 1},
		{"embedded twice", "6.1.0-47-amd64", 2},
		{"not embedded", "5.4.0-1-generic", 0},
	}

	for _, vs := range vmlinuxStates {
		for _, os := range osReleaseStates {
			for _, rel := range releases {
				t.Run(vs.name+"/"+os.name+"/"+rel.name, func(t *testing.T) {
					root := t.TempDir()
					if vs.make != nil {
						vs.make(t, filepath.Join(root, "sys/kernel/btf/vmlinux"))
					}
					if os.make != nil {
						os.make(t, filepath.Join(root, "etc/os-release"))
					}
					sel, err := a.Select(&SelectOptions{HostRoot: root, Arch: "x86_64", Release: rel.release})
					if (sel == nil) == (err == nil) {
						t.Fatalf("Select returned %s and %v: want exactly one", describe(sel), err)
					}

					kernelBroken := vs.name != "valid vmlinux" && vs.make != nil &&
						vs.name != "no vmlinux" && vs.name != "btf is a file"
					var want string // "kernel", "embedded <distro>", or "error"
					switch {
					case vs.name == "valid vmlinux":
						want = "kernel"
					case rel.embedded == 0:
						want = "error"
					case rel.embedded == 1:
						want = "embedded debian"
					case os.name == "debian 12":
						want = "embedded debian"
					case os.name == "ubuntu 22.04", os.name == "mint like ubuntu":
						want = "embedded ubuntu"
					default:
						want = "error"
					}

					switch want {
					case "kernel":
						if err != nil || sel.Source != SourceKernel || sel.Key.Release != rel.release {
							t.Fatalf("got %s, %v; want the kernel's own BTF", describe(sel), err)
						}
					case "error":
						if !errors.Is(err, ErrKernelNotSupported) {
							t.Fatalf("error %v, want ErrKernelNotSupported", err)
						}
						if kernelBroken && !strings.Contains(err.Error(), "kernel BTF") {
							t.Errorf("error %q does not say why the kernel's BTF was not used", err)
						}
						if rel.embedded == 2 && (os.name == "os-release directory" || os.name == "os-release FIFO") &&
							!strings.Contains(err.Error(), "os-release") {
							t.Errorf("error %q does not name os-release", err)
						}
					default:
						distro := strings.TrimPrefix(want, "embedded ")
						if err != nil || sel.Source != SourceEmbedded || sel.Key.Distro != distro || sel.Key.Release != rel.release {
							t.Fatalf("got %s, %v; want embedded %s %s", describe(sel), err, distro, rel.release)
						}
					}
				})
			}
		}
	}
}

// TestSelectUnreadableFiles covers files the agent may not read. Root
// reads any file whatever its mode, so this needs an unprivileged user.
func TestSelectUnreadableFiles(t *testing.T) {
	if unix.Geteuid() == 0 {
		t.Skip("running as root, which reads files whatever their mode; TestSelectHostTrees covers the other unusable files")
	}
	a, byRelease := selectPayload(t)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "sys/kernel/btf/vmlinux"), byRelease["6.12.118+deb12-amd64"].VMLinux)
	writeFile(t, filepath.Join(root, "etc/os-release"), []byte("ID=debian\n"))
	if err := os.Chmod(filepath.Join(root, "etc/os-release"), 0); err != nil {
		t.Fatal(err)
	}
	sel, err := a.Select(&SelectOptions{HostRoot: root, Arch: "x86_64", Release: "6.1.0-47-amd64"})
	if err != nil || sel.Source != SourceKernel {
		t.Fatalf("unreadable os-release failed a selection that has kernel BTF: %s, %v", describe(sel), err)
	}
	if err := os.Chmod(filepath.Join(root, "sys/kernel/btf/vmlinux"), 0); err != nil {
		t.Fatal(err)
	}
	sel, err = a.Select(&SelectOptions{HostRoot: root, Arch: "x86_64", Release: "6.12.118+deb12-amd64"})
	if err != nil || sel.Source != SourceEmbedded {
		t.Fatalf("unreadable vmlinux did not fall back to the embedded BTF: %s, %v", describe(sel), err)
	}
}

// FuzzSelectOSRelease feeds arbitrary os-release content to a selection
// whose release is embedded twice: Select must return exactly one of a
// Selection and an error, and pick debian or ubuntu only when the content
// names it.
func FuzzSelectOSRelease(f *testing.F) {
	f.Add("ID=debian\nVERSION_ID=12\n")
	f.Add("ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n")
	f.Add("ID='ubuntu'\nVERSION_ID='22.04'")
	a, _ := selectPayload(f)
	root := f.TempDir()
	// One file rewritten in place: truncating it to zero and writing it
	// again, as os.WriteFile does, makes ext4 flush it (auto_da_alloc),
	// which cost 2 ms per input.
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		f.Fatal(err)
	}
	osRelease, err := os.OpenFile(filepath.Join(root, "etc/os-release"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { osRelease.Close() })
	f.Fuzz(func(t *testing.T, content string) {
		if _, err := osRelease.WriteAt([]byte(content), 0); err != nil {
			t.Fatal(err)
		}
		if err := osRelease.Truncate(int64(len(content))); err != nil {
			t.Fatal(err)
		}
		sel, err := a.Select(&SelectOptions{HostRoot: root, ForceEmbedded: true, Arch: "x86_64", Release: "6.1.0-47-amd64"})
		if (sel == nil) == (err == nil) {
			t.Fatalf("Select returned %s and %v", describe(sel), err)
		}
		if sel != nil && !strings.Contains(strings.ToLower(content), sel.Key.Distro) {
			t.Fatalf("selected %s from os-release %q", sel.Key, content)
		}
		if err != nil && !errors.Is(err, ErrKernelNotSupported) {
			t.Fatalf("error %v does not wrap ErrKernelNotSupported", err)
		}
	})
}

// describe prints a selection for failure messages.
func describe(s *Selection) string {
	if s == nil {
		return "no selection"
	}
	return fmt.Sprintf("%s BTF of %s", s.Source, s.Key)
}

// TestSameID: os-release IDs match but for ASCII case, which is all the
// case they have (os-release(5)); a rune outside ASCII is itself, even
// the Kelvin sign that Unicode folds to k.
func TestSameID(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"debian", "debian", true},
		{"Debian", "debian", true},
		{"opensuse-leap", "OPENSUSE-LEAP", true},
		{"", "", true},
		{"debian", "debia", false},
		{"rhel", "centos", false},
		{"ubuntu", "ubuntu ", false},
		{"\u212aali", "kali", false},
		{"-", "\r", false}, // ASCII, but not letters
	} {
		if got := sameID(c.a, c.b); got != c.same {
			t.Errorf("sameID(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

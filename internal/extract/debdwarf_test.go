package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

func TestDebugPaths(t *testing.T) {
	for _, tt := range []struct {
		path          string
		vmlinux       string
		release, name string
	}{
		{path: "usr/lib/debug/boot/vmlinux-6.1.0-50-cloud-amd64", vmlinux: "6.1.0-50-cloud-amd64"},
		{path: "usr/lib/debug/lib/modules/6.1.0-50-cloud-amd64/vmlinux", vmlinux: "6.1.0-50-cloud-amd64"},
		{path: "usr/lib/debug/lib/modules/6.1.0-50-cloud-amd64/kernel/net/netfilter/nf_conntrack.ko", release: "6.1.0-50-cloud-amd64", name: "nf_conntrack"},
		{path: "usr/lib/debug/boot/System.map-6.1.0-50-cloud-amd64"},
		{path: "usr/lib/debug/boot/vmlinux-"},
		{path: "usr/lib/debug/boot/vmlinux-6.1/x"},
		{path: "usr/lib/debug/.build-id/70/abcdef.debug"},
		{path: "usr/lib/debug/lib/modules/6.1.0/kernel/x.ko.xz"},
		{path: "usr/lib/debug/lib/modules/6.1.0/kernel/.ko"},
		{path: "boot/vmlinuz-6.1.0"},
	} {
		rel, ok := debugVMLinuxPath(tt.path)
		if ok != (tt.vmlinux != "") || rel != tt.vmlinux {
			t.Errorf("debugVMLinuxPath(%q) = %q, %v; want %q", tt.path, rel, ok, tt.vmlinux)
		}
		rel, name, ok := debugModulePath(tt.path)
		if ok != (tt.name != "") || rel != tt.release || name != tt.name {
			t.Errorf("debugModulePath(%q) = %q, %q, %v; want %q, %q", tt.path, rel, name, ok, tt.release, tt.name)
		}
	}
}

// debugDeb builds a -dbg package around the given data members.
func debugDeb(t testing.TB, members ...extracttest.Section) []byte {
	control := "Package: linux-image-6.99.0-1-amd64-dbg\nVersion: 6.99.1-1\nArchitecture: amd64\n"
	return extracttest.ArFile(
		extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")},
		extracttest.Section{Name: "control.tar.gz", Data: extracttest.TarGz(t, extracttest.Section{Name: "./control", Data: []byte(control)})},
		extracttest.Section{Name: "data.tar.gz", Data: extracttest.TarGz(t, members...)},
	)
}

func TestReadDebDWARF(t *testing.T) {
	vmlinux, mod := []byte("\x7fELF vmlinux stand-in"), []byte("\x7fELF module stand-in")
	deb := debugDeb(t,
		extracttest.Section{Name: "./usr/lib/debug/boot/vmlinux-6.99.0-1-amd64", Data: vmlinux},
		extracttest.Section{Name: "./usr/lib/debug/lib/modules/6.99.0-1-amd64/kernel/../../../../../../../etc/evil.ko", Data: mod},
		extracttest.Section{Name: "./usr/lib/debug/lib/modules/6.99.0-1-amd64/kernel/fs/ext4.ko", Data: mod},
		extracttest.Section{Name: "./usr/share/doc/copyright", Data: []byte("GPL")},
	)
	c, err := ReadDebControl(bytes.NewReader(deb))
	if err != nil || !IsDebugPackage(c) || c.Architecture != "amd64" {
		t.Fatalf("ReadDebControl: %+v, %v", c, err)
	}
	for _, noModules := range []bool{false, true} {
		dir := t.TempDir()
		d, err := ReadDebDWARF(bytes.NewReader(deb), dir, noModules)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.VMLinux) != 1 || d.VMLinux[0].Release != "6.99.0-1-amd64" {
			t.Fatalf("vmlinux %+v", d.VMLinux)
		}
		wantModules := 1 // the member leaving its tree is cleaned to etc/evil.ko: not a module
		if noModules {
			wantModules = 0
		}
		if len(d.Modules) != wantModules {
			t.Fatalf("modules %+v, want %d", d.Modules, wantModules)
		}
		files, _ := os.ReadDir(dir)
		if len(files) != 1+wantModules {
			t.Errorf("%d files in the directory, want %d", len(files), 1+wantModules)
		}
		for _, f := range append(d.VMLinux, d.Modules...) {
			if filepath.Dir(f.File) != dir {
				t.Errorf("%s streamed to %s, outside %s", f.Path, f.File, dir)
			}
			b, err := os.ReadFile(f.File)
			if err != nil || (f.Name == "" && !bytes.Equal(b, vmlinux)) || (f.Name == "ext4" && !bytes.Equal(b, mod)) {
				t.Errorf("%s streamed as %q, %v", f.Path, b, err)
			}
		}
	}
	if _, err := ReadDebDWARF(bytes.NewReader(deb[:len(deb)-40]), t.TempDir(), false); err == nil || !strings.Contains(err.Error(), "data.tar.gz") {
		t.Errorf("truncated package: %v", err)
	}
}

// FuzzReadDebDWARF feeds the debug package reader, which writes what it
// streams into a temporary directory and nowhere else.
func FuzzReadDebDWARF(f *testing.F) {
	f.Add(debugDeb(f, extracttest.Section{Name: "./usr/lib/debug/boot/vmlinux-6.99.0-1-amd64", Data: []byte("\x7fELF")},
		extracttest.Section{Name: "./usr/lib/debug/lib/modules/6.99.0-1-amd64/kernel/x.ko", Data: []byte("\x7fELF")}))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		d, err := ReadDebDWARF(bytes.NewReader(data), dir, false)
		if err != nil {
			return
		}
		for _, f := range append(d.VMLinux, d.Modules...) {
			if filepath.Dir(f.File) != dir {
				t.Fatalf("%s streamed to %s, outside %s", f.Path, f.File, dir)
			}
		}
	})
}

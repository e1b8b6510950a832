package extract

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	return debugDebOf(t, extracttest.TarGz(t, members...))
}

// debugDebOf builds a -dbg package around the given data.tar.gz.
func debugDebOf(t testing.TB, dataTarGz []byte) []byte {
	control := "Package: linux-image-6.99.0-1-amd64-dbg\nVersion: 6.99.1-1\nArchitecture: amd64\n"
	return extracttest.ArFile(
		extracttest.Section{Name: "debian-binary", Data: []byte("2.0\n")},
		extracttest.Section{Name: "control.tar.gz", Data: extracttest.TarGz(t, extracttest.Section{Name: "./control", Data: []byte(control)})},
		extracttest.Section{Name: "data.tar.gz", Data: dataTarGz},
	)
}

func TestReadDebDWARF(t *testing.T) {
	vmlinux := extracttest.VMLinuxELF(t, elf.EM_X86_64)
	mod := extracttest.MakeELF(elf.EM_X86_64, extracttest.Section{Name: ".BTF", Data: extracttest.SplitBTF(t)})
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
		// Found hears of each file as soon as it is whole on disk.
		var found []DWARFFile
		whole := func(f DWARFFile) error {
			b, err := os.ReadFile(f.File)
			if err != nil || len(b) != len(vmlinux) && len(b) != len(mod) {
				t.Errorf("Found(%s): %d bytes on disk, %v", f.Path, len(b), err)
			}
			found = append(found, f)
			return nil
		}
		d, err := ReadDebDWARF(bytes.NewReader(deb), DWARFOptions{Dir: dir, NoModules: noModules, Found: whole})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(found, append(slices.Clone(d.VMLinux), d.Modules...)) {
			t.Errorf("Found heard of %+v, the package holds %+v and %+v", found, d.VMLinux, d.Modules)
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
	stop := errors.New("stop")
	var heard int
	if _, err := ReadDebDWARF(bytes.NewReader(deb), DWARFOptions{Dir: t.TempDir(), Found: func(DWARFFile) error { heard++; return stop }}); !errors.Is(err, stop) || heard != 1 {
		t.Errorf("Found's error: read ended with %v after %d files, want it after 1", err, heard)
	}
	if _, err := ReadDebDWARF(bytes.NewReader(deb[:len(deb)-40]), DWARFOptions{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "data.tar.gz") {
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
		d, err := ReadDebDWARF(bytes.NewReader(data), DWARFOptions{Dir: dir})
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

// TestReadDebDWARFFirstBytes: a debug package's vmlinux or module is
// checked from its first bytes before any of it is written to disk. The
// members are the corpus's real x86-64 nvme module, changed where the
// case says; the one of zeros claims 4 GiB, as a 625 KB package's did,
// and holds its first MiB (past which no reader should get).
func TestReadDebDWARFFirstBytes(t *testing.T) {
	const vmlinuxPath = "./usr/lib/debug/boot/vmlinux-6.99.0-1-amd64"
	_, real := realModule(t, "x86_64", checksumRelease, "nvme")
	patch := func(off int, b ...byte) []byte {
		c := bytes.Clone(real)
		copy(c[off:], b)
		return c
	}
	var zeros bytes.Buffer
	tw := tar.NewWriter(&zeros)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: vmlinuxPath, Mode: 0o644, Size: 4 << 30})
	tw.Write(make([]byte, 1<<20))
	tw.Flush()
	for _, tt := range []struct {
		name string
		data []byte // data.tar, uncompressed
		want string // in the error; "" for none
	}{
		{"real ELF", extracttest.Tar(extracttest.Section{Name: vmlinuxPath, Data: real}), ""},
		{"4 GiB of zeros", zeros.Bytes(), "not an ELF file"},
		{"shorter than an ELF header", extracttest.Tar(extracttest.Section{Name: vmlinuxPath, Data: real[:12]}), "not an ELF file"},
		{"a BPF object", extracttest.Tar(extracttest.Section{Name: vmlinuxPath, Data: patch(18, byte(elf.EM_BPF))}), "ELF machine EM_BPF"},
		{"x32 (ELFCLASS32 x86-64)", extracttest.Tar(extracttest.Section{Name: vmlinuxPath, Data: patch(int(elf.EI_CLASS), byte(elf.ELFCLASS32))}), "ELF machine EM_X86_64 (ELFCLASS32"},
		{"a core dump", extracttest.Tar(extracttest.Section{Name: vmlinuxPath, Data: patch(16, byte(elf.ET_CORE))}), "ELF type ET_CORE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			deb := debugDebOf(t, extracttest.Compressors[FormatGzip](t, tt.data))
			dir := t.TempDir()
			d, err := ReadDebDWARF(bytes.NewReader(deb), DWARFOptions{Dir: dir})
			files, _ := os.ReadDir(dir)
			if tt.want == "" {
				if err != nil || len(d.VMLinux) != 1 || len(files) != 1 {
					t.Fatalf("%+v, %d files, %v", d, len(files), err)
				}
				return
			}
			if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "member "+vmlinuxPath+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrUnknownFormat naming the member and saying %q", err, tt.want)
			}
			if len(files) != 0 {
				t.Errorf("%d files written for a member refused", len(files))
			}
		})
	}
}

// TestReadDWARFArch: a debug package saying one architecture (a .deb's
// control file, an RPM's ARCH tag) and holding an ELF file of another is
// refused, naming the package, what it says and the ELF machine, before
// the file is written. The files are the corpus's real x86-64 and arm64
// modules; the packages are made by dpkg-deb and rpmbuild.
func TestReadDWARFArch(t *testing.T) {
	_, x86 := realModule(t, "x86_64", checksumRelease, "nvme")
	_, arm64 := realModule(t, "arm64", "6.1.0-57-arm64", "virtio_net")
	deb := func(arch string, file []byte) func(t *testing.T, dir string) ([]DWARFFile, error) {
		return func(t *testing.T, dir string) ([]DWARFFile, error) {
			control := "Package: linux-image-6.99.0-1-" + arch + "-dbg\nVersion: 6.99.1-1\nArchitecture: " + arch + "\nMaintainer: btfembed tests <test@example.org>\nDescription: test\n"
			b := extracttest.DpkgDeb(t, control, "gzip",
				extracttest.Section{Name: "usr/lib/debug/boot/vmlinux-6.99.0-1-" + arch, Data: file},
				extracttest.Section{Name: "usr/lib/debug/lib/modules/6.99.0-1-" + arch + "/kernel/m.ko", Data: file})
			d, err := ReadDebDWARF(bytes.NewReader(b), DWARFOptions{Dir: dir})
			if err != nil {
				return nil, err
			}
			return append(d.VMLinux, d.Modules...), nil
		}
	}
	rpm := func(arch string, file []byte) func(t *testing.T, dir string) ([]DWARFFile, error) {
		return func(t *testing.T, dir string) ([]DWARFFile, error) {
			pkgs := extracttest.MakeRPMs(t, extracttest.RPMBuild{Source: "kernel", Version: "6.99.0", Release: "1.el9", Arch: arch, Payload: "w9.gzdio",
				Packages: map[string][]extracttest.Section{"kernel-debuginfo": {
					{Name: "/usr/lib/debug/lib/modules/6.99.0-1.el9." + arch + "/vmlinux", Data: file},
				}}})
			f, err := os.Open(pkgs["kernel-debuginfo"])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := OpenRPM(f)
			if err != nil {
				t.Fatal(err)
			}
			vmlinux, modules, err := p.ReadDWARF(DWARFOptions{Dir: dir})
			return append(vmlinux, modules...), err
		}
	}
	for _, tt := range []struct {
		name  string
		read  func(t *testing.T, dir string) ([]DWARFFile, error)
		files int
		want  string // in the error; "" for none
	}{
		{"deb arm64 of arm64", deb("arm64", arm64), 2, ""},
		{"deb amd64 of x86-64", deb("amd64", x86), 2, ""},
		{"deb arm64 of x86-64", deb("arm64", x86), 0,
			`package linux-image-6.99.0-1-arm64-dbg: its control file says architecture "arm64", member usr/lib/debug/boot/vmlinux-6.99.0-1-arm64 is an ELF file for x86_64 (EM_X86_64)`},
		{"deb amd64 of arm64", deb("amd64", arm64), 0, `control file says architecture "amd64", member usr/lib/debug/boot/vmlinux-6.99.0-1-amd64 is an ELF file for arm64 (EM_AARCH64)`},
		{"deb all of x86-64", deb("all", x86), 0, `control file says architecture "all"`},
		{"rpm aarch64 of x86-64", rpm("aarch64", x86), 0,
			`package kernel-debuginfo: its ARCH tag says architecture "aarch64", member usr/lib/debug/lib/modules/6.99.0-1.el9.aarch64/vmlinux is an ELF file for x86_64 (EM_X86_64)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			got, err := tt.read(t, dir)
			files, _ := os.ReadDir(dir)
			if tt.want == "" {
				if err != nil || len(got) != tt.files || len(files) != tt.files {
					t.Fatalf("%d files read, %d written, error %v; want %d", len(got), len(files), err, tt.files)
				}
				return
			}
			if !errors.Is(err, ErrArchMismatch) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrArchMismatch saying %q", err, tt.want)
			}
			if len(files) != 0 {
				t.Errorf("%d files written for a package refused", len(files))
			}
		})
	}
}

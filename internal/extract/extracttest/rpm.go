package extracttest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cavaliergopher/cpio"
)

// RPMPayloads are rpmbuild's %_binary_payload settings for each payload
// compression rpm writes (rpmio's w<level>.<io>), by the name the
// package's PAYLOADCOMPRESSOR tag gives it.
var RPMPayloads = map[string]string{
	"gzip":  "w9.gzdio",
	"xz":    "w6.xzdio",
	"zstd":  "w19.zstdio",
	"bzip2": "w9.bzdio",
	"lzma":  "w6.lzdio",
}

// RPMBuild describes the binary RPMs built from one source package, as a
// kernel build makes kernel-core, kernel-modules and kernel-debuginfo
// from kernel.src.rpm: they share its SOURCERPM tag.
type RPMBuild struct {
	Source  string // source package name: "kernel"
	Version string // "6.12.118"
	Release string // "1.el9": the dist tag is what import reads
	Vendor  string // "" for none
	Arch    string // rpmbuild --target: "x86_64", "aarch64"
	Payload string // an RPMPayloads value, or another rpmio setting
	// Packages are the binary packages, by name ("kernel-core"), each
	// with its files: Name is the absolute install path
	// ("/lib/modules/<release>/vmlinuz").
	Packages map[string][]Section
}

// MakeRPMs builds the binary RPMs of b with rpmbuild (Debian's rpm
// package) and returns their paths by package name, in a directory of tb.
// It skips the test, saying so, where rpmbuild is not installed.
func MakeRPMs(tb testing.TB, b RPMBuild) map[string]string {
	tb.Helper()
	rpmbuild, err := exec.LookPath("rpmbuild")
	if err != nil {
		tb.Skip("rpmbuild not installed (Debian package rpm): RPM fixtures cannot be built")
	}
	top := tb.TempDir()
	tree := filepath.Join(top, "tree")
	var spec strings.Builder
	fmt.Fprintf(&spec, "Name: %s\nVersion: %s\nRelease: %s\nSummary: test\nLicense: GPL-2.0-only\nAutoReqProv: no\n", b.Source, b.Version, b.Release)
	if b.Vendor != "" {
		fmt.Fprintf(&spec, "Vendor: %s\n", b.Vendor)
	}
	fmt.Fprintf(&spec, "%%description\ntest\n%%install\ncp -a %s/. %%{buildroot}/\n", tree)
	for _, name := range slices.Sorted(maps.Keys(b.Packages)) {
		fmt.Fprintf(&spec, "%%package -n %s\nSummary: test\n%%description -n %s\ntest\n%%files -n %s\n", name, name, name)
		for _, f := range b.Packages[name] {
			p := filepath.Join(tree, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				tb.Fatal(err)
			}
			fmt.Fprintf(&spec, "%q\n", f.Name)
		}
	}
	specFile := filepath.Join(top, "k.spec")
	if err := os.WriteFile(specFile, []byte(spec.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(top, "out")
	cmd := exec.Command(rpmbuild, "-bb", "--quiet", "--nodeps", "--target", b.Arch,
		"--define", "_topdir "+top,
		"--define", "_rpmdir "+out,
		"--define", "_build_name_fmt %%{NAME}.rpm",
		"--define", "_binary_payload "+b.Payload,
		// No stripping, compressing or debuginfo extraction of the
		// files: the packages hold them as given.
		"--define", "__os_install_post %{nil}",
		"--define", "debug_package %{nil}",
		"--define", "_build_id_links none",
		specFile)
	cmd.Env = append(os.Environ(), "HOME="+top)
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("rpmbuild: %v\n%s\n%s", err, msg, spec.String())
	}
	paths := map[string]string{}
	for name := range b.Packages {
		paths[name] = filepath.Join(out, name+".rpm")
	}
	return paths
}

// RPMLayout finds the main header and the payload of a package, from the
// sizes in the signature and main header intros (rpm's format document:
// a 96-byte lead, then each header's 16-byte intro, 16-byte index entries
// and data, the signature's padded to 8 bytes).
func RPMLayout(b []byte) (header, payload int) {
	be := binary.BigEndian
	sig := 96 + 16 + int(be.Uint32(b[96+8:]))*16 + int(be.Uint32(b[96+12:]))
	header = (sig + 7) / 8 * 8
	payload = header + 16 + int(be.Uint32(b[header+8:]))*16 + int(be.Uint32(b[header+12:]))
	return header, payload
}

// RPMWithPayload returns a package whose headers are those of pkg, a
// package with a gzip payload, and whose payload is a gzip cpio archive
// (written by github.com/cavaliergopher/cpio) of the given regular files,
// named as given: what rpmbuild will not make (names with newlines, files
// the header does not list).
func RPMWithPayload(tb testing.TB, pkg []byte, files ...Section) []byte {
	tb.Helper()
	var archive bytes.Buffer
	w := cpio.NewWriter(&archive)
	for _, f := range files {
		if err := w.WriteHeader(&cpio.Header{Name: f.Name, Mode: 0o100644, Size: int64(len(f.Data))}); err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(f.Data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	_, payload := RPMLayout(pkg)
	return append(bytes.Clone(pkg[:payload]), Compressors["gzip"](tb, archive.Bytes())...)
}

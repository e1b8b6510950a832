package extracttest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
	return RPMSetPayload(tb, pkg, Compressors["gzip"](tb, archive.Bytes()))
}

// RPM header tags RPMSetPayload updates (rpm's lib/rpmtag.h).
const (
	rpmSigSHA1        = 269  // RPMSIGTAG_SHA1: the main header's SHA-1, hex
	rpmSigSHA256      = 273  // RPMSIGTAG_SHA256: the main header's SHA-256, hex
	rpmPayloadDigest  = 5092 // RPMTAG_PAYLOADDIGEST: the payload's, hex
	rpmSignatureStart = 96   // after the lead
)

// RPMSetPayload returns pkg, a package rpmbuild made, with its payload
// replaced by payload (as the file is to hold it: compressed), and the
// digests a reader checks made to match it, as a hostile package would
// have them: the payload digest in the main header (its algorithm left
// as rpmbuild wrote it: SHA-256) and the main header's SHA-256 and SHA-1
// in the signature header. The signature header's MD5 and size of header
// and payload together, which rpm -K checks, are left as they were.
func RPMSetPayload(tb testing.TB, pkg, payload []byte) []byte {
	tb.Helper()
	header, start := RPMLayout(pkg)
	b := append(bytes.Clone(pkg[:start]), payload...)
	sum := sha256.Sum256(payload)
	if !setRPMTag(tb, b, header, rpmPayloadDigest, hex.EncodeToString(sum[:])) {
		tb.Fatal("rpm: no payload digest in the main header")
	}
	hsum, hsum1 := sha256.Sum256(b[header:start]), sha1.Sum(b[header:start])
	if !setRPMTag(tb, b, rpmSignatureStart, rpmSigSHA256, hex.EncodeToString(hsum[:])) {
		tb.Fatal("rpm: no header SHA-256 in the signature header")
	}
	setRPMTag(tb, b, rpmSignatureStart, rpmSigSHA1, hex.EncodeToString(hsum1[:]))
	return b
}

// setRPMTag overwrites in place the first string of a tag of the header
// at off (its intro, then index entries of tag, type, offset and count,
// then the data) with s, which must be as long, and tells whether the
// header has the tag.
func setRPMTag(tb testing.TB, b []byte, off int, tag uint32, s string) bool {
	tb.Helper()
	be := binary.BigEndian
	entries := int(be.Uint32(b[off+8:]))
	data := off + 16 + entries*16
	for i := range entries {
		e := b[off+16+i*16:]
		if be.Uint32(e) != tag {
			continue
		}
		at := data + int(be.Uint32(e[8:]))
		if n := bytes.IndexByte(b[at:], 0); n != len(s) {
			tb.Fatalf("rpm: tag %d holds %d bytes, not %d", tag, n, len(s))
		}
		copy(b[at:], s)
		return true
	}
	return false
}

package extract

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
	"github.com/btfembed/btfembed/internal/kerneltest"
)

// debAsRPM packs every file of the shared corpus's Debian kernel package
// (vmlinuz, 1,121 modules, 107 MB) into a kernel RPM with the given
// payload setting.
func debAsRPM(b *testing.B, payload string) string {
	b.Helper()
	f, err := os.Open(filepath.Join(kerneltest.SharedCorpus(b), "packages", "linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var files []extracttest.Section
	err = DebFiles(f, func(string) bool { return true }, func(p string, data []byte) error {
		files = append(files, extracttest.Section{Name: "/" + p, Data: append([]byte(nil), data...)})
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return extracttest.MakeRPMs(b, extracttest.RPMBuild{Source: "linux", Version: "6.1.176", Release: "1.el9", Arch: "x86_64", Payload: payload,
		Packages: map[string][]extracttest.Section{"kernel-core": files}})["kernel-core"]
}

// BenchmarkRPMReader reads every file of a whole kernel RPM with the
// package's reader (its headers, its decoders, cavaliergopher/cpio).
// b.SetBytes is the RPM's size. docs/corpus.md compares it with
// go-rpmutils v0.4.0 alone (its decoders, its cpio reader), measured
// when both were dependencies.
//
//	BTFEMBED_CORPUS=../shared/corpus go test -run '^$' -bench RPMReader -benchmem ./internal/extract
func BenchmarkRPMReader(b *testing.B) {
	for _, payload := range []string{"w3.zstdio", "w6.gzdio"} {
		rpm := debAsRPM(b, payload)
		st, err := os.Stat(rpm)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(payload, func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				f, err := os.Open(rpm)
				if err != nil {
					b.Fatal(err)
				}
				n, err := readAllFiles(f)
				f.Close()
				if err != nil || n < 100<<20 {
					b.Fatalf("read %d bytes: %v", n, err)
				}
			}
		})
	}
}

// readAllFiles reads the contents of every regular file of a package and
// returns how many bytes they hold.
func readAllFiles(f *os.File) (int64, error) {
	p, err := OpenRPM(f)
	if err != nil {
		return 0, err
	}
	var total int64
	err = p.walk(func(_ string, _ int64, r io.Reader) error {
		n, err := io.Copy(io.Discard, r)
		total += n
		return err
	})
	return total, err
}

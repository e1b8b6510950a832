package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

var rpmHeaderSeeds = flag.Bool("rpm-header-seeds", false, "rewrite testdata/fuzz/FuzzRPMHeader from packages rpmbuild makes")

// rpmHeaders returns the signature header and the main header of pkg, a
// package rpmbuild made, each from its intro to the end of its store.
func rpmHeaders(pkg []byte) (sig, header []byte) {
	start, payload := extracttest.RPMLayout(pkg)
	sigSize := rpmHeaderSize(binary.BigEndian.Uint32(pkg[rpmLeadSize+8:]), binary.BigEndian.Uint32(pkg[rpmLeadSize+12:]))
	return pkg[rpmLeadSize : rpmLeadSize+sigSize], pkg[start:payload]
}

// rpmIndexEntry returns where the index entry of tag starts in header.
func rpmIndexEntry(tb testing.TB, header []byte, tag uint32) int {
	tb.Helper()
	for i := range int(binary.BigEndian.Uint32(header[8:])) {
		off := rpmIntroSize + i*rpmEntrySize
		if binary.BigEndian.Uint32(header[off:]) == tag {
			return off
		}
	}
	tb.Fatalf("no tag %d in the header", tag)
	return 0
}

// TestParseRPMTags reads the main header of a package rpmbuild made, as
// it is and with one field of its intro or index changed: every change
// gives an error naming the tag and what is wrong with it, never a panic
// or an out-of-range slice.
func TestParseRPMTags(t *testing.T) {
	_, good := rpmHeaders(smallRPM(t, "w9.gzdio"))
	const (
		tag, typ, off, count = 0, 4, 8, 12 // fields of an index entry
	)
	set := func(tag uint32, field int, v uint32) func(b []byte) []byte {
		return func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[rpmIndexEntry(t, b, tag)+field:], v)
			return b
		}
	}
	dl := binary.BigEndian.Uint32(good[12:])
	tests := []struct {
		name   string
		change func(b []byte) []byte
		is     error
		want   string // in the error, "" for none
	}{
		{"as built", func(b []byte) []byte { return b }, nil, ""},
		{"cut short", func(b []byte) []byte { return b[:len(b)-1] }, io.ErrUnexpectedEOF, fmt.Sprintf("need %d bytes, %d here", len(good), len(good)-1)},
		{"store over the cap", func(b []byte) []byte { binary.BigEndian.PutUint32(b[12:], maxRPMData+1); return b }, ErrTooLarge, "bytes of data, at most"},
		{"tags over the cap", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], maxRPMTags+1); return b }, ErrTooLarge, "65536 tags"},
		{"offset past the store", set(rpmTagName, off, dl+1), nil, fmt.Sprintf("tag 1000: data offset %d past the %d-byte store", dl+1, dl)},
		{"offset at the store's end", set(rpmTagName, off, dl), nil, "tag 1000: 1 values of type 6 at offset"},
		{"unknown type", set(rpmTagVersion, typ, 10), nil, "tag 1001: unknown data type 10"},
		// NAME's data moved onto VERSION's: the two overlap.
		{"overlapping data", set(rpmTagName, off, 17), nil, "tag 1000: 1 values of type 6 at offset 17 do not fit before tag 1001's data at 17"},
		{"string array past the next tag", set(1047, count, 1000), nil, "tag 1047: 1000 values of type 8"},
		{"string of two values", set(rpmTagName, count, 2), nil, "tag 1000: 2 values of type 6"},
		{"int64s past the store", func(b []byte) []byte {
			return set(1048, count, 0xffffffff)(set(1048, typ, rpmTypeInt64)(b))
		}, nil, "tag 1048: 4294967295 values of type 5"},
		{"tag twice", set(rpmTagVersion, tag, rpmTagName), nil, "tag 1000 appears more than once"},
		{"name not a string", set(rpmTagName, typ, rpmTypeBin), nil, "tag 1000 has type 7, not a string"},
		{"no name", set(rpmTagName, tag, 999), nil, "rpm header: no package name"},
		{"digest algorithm not an integer", set(rpmTagPayloadDigestAlgo, typ, rpmTypeString), nil, "tag 5093 has type 6, not an integer"},
		{"no digest algorithm", set(rpmTagPayloadDigestAlgo, tag, 5094), nil, "payload digest without its algorithm (tag 5093)"},
		{"no payload digest", set(rpmTagPayloadDigest, tag, 5096), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.change(bytes.Clone(good))
			tags, err := parseRPMTags(b, "header", maxRPMTags, maxRPMData)
			var h RPMHeader
			var digest *payloadDigest
			if err == nil {
				h, digest, err = readRPMHeader(tags)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if h.Name != "kernel-modules" || h.Version != "6.99.0" || h.Arch != "x86_64" || h.Compressor != "gzip" ||
					h.SourceRPM != "kernel-6.99.0-7.el9.src.rpm" {
					t.Errorf("header %+v", h)
				}
				if (digest != nil) != (tt.name == "as built") {
					t.Errorf("payload digest %v", digest)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), "rpm header: ") || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("error %v, want one saying %q (wrapping %v)", err, tt.want, tt.is)
			}
		})
	}
}

// TestRPMHeaderClaimedMemory opens a package whose main header claims
// 60 MiB of data that the file does not hold: the reader allocates as
// the bytes arrive, not what the intro claims.
func TestRPMHeaderClaimedMemory(t *testing.T) {
	pkg := smallRPM(t, "w9.gzdio")
	start, _ := extracttest.RPMLayout(pkg)
	binary.BigEndian.PutUint32(pkg[start+12:], 60<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := OpenRPM(bytes.NewReader(pkg))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "rpm header: unexpected EOF") {
		t.Fatalf("error %v, want a truncated header", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("allocated %d KiB for a %d-byte package", n>>10, len(pkg))
	}
}

// TestRPMHeaderSeeds reads the committed seeds of FuzzRPMHeader, headers
// of packages rpmbuild made: each must parse, and each main header must
// name its package. With -rpm-header-seeds it first rewrites them from
// packages built now:
//
//	go test -run RPMHeaderSeeds -rpm-header-seeds ./internal/extract
func TestRPMHeaderSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRPMHeader")
	if *rpmHeaderSeeds {
		writeRPMHeaderSeeds(t, dir)
	}
	seeds, err := filepath.Glob(filepath.Join(dir, "*-header"))
	if err != nil || len(seeds) == 0 {
		t.Fatalf("no seeds in %s (%v)", dir, err)
	}
	for _, seed := range seeds {
		t.Run(filepath.Base(seed), func(t *testing.T) {
			b := readFuzzSeed(t, seed)
			if strings.HasSuffix(seed, "-signature-header") {
				if _, err := parseRPMTags(b, "signature header", maxRPMSigTags, maxRPMSigData); err != nil {
					t.Fatal(err)
				}
				return
			}
			tags, err := parseRPMTags(b, "header", maxRPMTags, maxRPMData)
			if err != nil {
				t.Fatal(err)
			}
			h, _, err := readRPMHeader(tags)
			if err != nil || !strings.HasPrefix(filepath.Base(seed), h.Name+"-") {
				t.Fatalf("header %+v, error %v", h, err)
			}
		})
	}
}

// writeRPMHeaderSeeds writes the headers of the packages rpmbuild makes
// for the seeds: a kernel build's packages of one file each with every
// payload compression (the headers differ in their compressor tags and
// digests), one with a vendor and one with real modules (longer file
// lists), each main header named <package>-<compression>-header and each
// signature header <package>-<compression>-signature-header.
func writeRPMHeaderSeeds(t *testing.T, dir string) {
	mod := []extracttest.Section{{Name: "/lib/modules/6.99.0-7.el9.x86_64/kernel/m.ko", Data: []byte("module")}}
	builds := []extracttest.RPMBuild{}
	for _, comp := range []string{"gzip", "xz", "zstd", "bzip2", "lzma"} {
		builds = append(builds, extracttest.RPMBuild{Source: "kernel", Version: "6.99.0", Release: "7.el9", Arch: "x86_64",
			Payload: extracttest.RPMPayloads[comp], Packages: map[string][]extracttest.Section{"kernel-modules": mod}})
	}
	builds = append(builds,
		extracttest.RPMBuild{Source: "kernel", Version: "5.14.0", Release: "427.el9", Vendor: "Rocky Enterprise Software Foundation", Arch: "aarch64",
			Payload: extracttest.RPMPayloads["xz"], Packages: map[string][]extracttest.Section{
				"kernel-debuginfo": {{Name: "/usr/lib/debug/lib/modules/5.14.0-427.el9.aarch64/vmlinux", Data: []byte("vmlinux")}}}},
		extracttest.RPMBuild{Source: "kernel", Version: "6.12.118", Release: "1.el9", Arch: "x86_64",
			Payload: extracttest.RPMPayloads["zstd"], Packages: map[string][]extracttest.Section{"kernel-core": realModules(t, "6.12.118+deb12-amd64")}},
	)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range builds {
		for name, path := range extracttest.MakeRPMs(t, b) {
			pkg, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p, err := OpenRPM(bytes.NewReader(pkg))
			if err != nil {
				t.Fatal(err)
			}
			sig, header := rpmHeaders(pkg)
			stem := filepath.Join(dir, name+"-"+p.Header.Compressor)
			for file, data := range map[string][]byte{stem + "-header": header, stem + "-signature-header": sig} {
				if err := os.WriteFile(file, fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// readFuzzSeed reads a seed file of one []byte value as the go command
// writes them.
func readFuzzSeed(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	s, ok := strings.CutPrefix(string(b), "go test fuzz v1\n[]byte(")
	s, ok2 := strings.CutSuffix(s, ")\n")
	if !ok || !ok2 {
		tb.Fatalf("%s: not a seed of one []byte", path)
	}
	v, err := strconv.Unquote(s)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return []byte(v)
}

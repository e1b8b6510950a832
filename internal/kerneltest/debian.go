package kerneltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/atomicfile"
)

// FetchEnv opts in to tests that download kernel packages from Debian's
// archive. Debian's 686-pae kernel with its -dbg package is 820 MB, a
// minute of download and another of pahole and extraction when the
// cache is cold: too much for every `go test ./...`.
const FetchEnv = "BTFEMBED_FETCH"

// DebianKernel is a Debian kernel and its debug package, fetched.
type DebianKernel struct {
	Release string // uname -r: "6.1.0-57-686-pae"
	Version string // the packages' version: "6.1.192-3"
	Image   string // path of linux-image-<release>-unsigned_*.deb
	Dbg     string // path of linux-image-<release>-dbg_*.deb
}

// Debian686PAE returns Debian 12's newest 686-pae (i386) kernel package
// and its -dbg package, fetched with apt-get download into the test cache
// once and named there by digest; later calls, in any process, use the
// cache without the network. It skips the test unless $BTFEMBED_FETCH is
// set, and when Debian's archive cannot be reached.
//
// apt runs with a private state in the cache (package lists for i386
// only, from the machine's sources), so the machine's dpkg architectures
// and lists are left as they are: no `dpkg --add-architecture i386`.
func Debian686PAE(tb testing.TB) DebianKernel {
	tb.Helper()
	if os.Getenv(FetchEnv) == "" {
		tb.Skipf("Debian's 686-pae kernel and its -dbg package are 820 MB from Debian's archive: set %s=1 to fetch them (cached afterwards)", FetchEnv)
	}
	needTools(tb, "Debian packages cannot be fetched here", "apt-get", "apt-cache")
	return fetched[DebianKernel](tb)(fetch686PAE(tb.Context()))
}

// needTools skips the test, saying why, when a tool is not on $PATH.
func needTools(tb testing.TB, why string, tools ...string) {
	tb.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			tb.Skipf("%s not found: %s", tool, why)
		}
	}
}

// fetched returns what a fetch or build gave, skipping the test when the
// archive could not be reached and failing it on any other error.
func fetched[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		var unreachable *archiveError
		if errors.As(err, &unreachable) {
			tb.Skip(err)
		}
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

// dbgDepends is the Depends line of the linux-image-686-pae-dbg
// metapackage, naming the current ABI's -dbg package and its version.
var dbgDepends = regexp.MustCompile(`(?m)^Depends: linux-image-(\S+)-dbg \(= (\S+)\)`)

// archiveError is a failure to reach a package archive: a reason to skip.
type archiveError struct {
	archive string // "Debian's archive"
	err     error
}

func (e *archiveError) Error() string {
	return fmt.Sprintf("%s cannot be reached: %v", e.archive, e.err)
}
func (e *archiveError) Unwrap() error { return e.err }

// debianDir holds the fetched packages (<sha256>.deb), the index naming
// them and apt's private state.
func debianDir() string { return filepath.Join(filepath.Dir(cacheDir()), "debian") }

const index686PAE = "686-pae.json"

const debianArchive = "Debian's archive"

func fetch686PAE(ctx context.Context) (DebianKernel, error) {
	dir := debianDir()
	if k, err := readIndex(dir); err == nil {
		return k, nil
	}
	apt := newAptI386(dir)
	// An index that fails (a mirror caught mid-sync serves the security
	// pocket's lists with the wrong size) leaves the others: the kernel
	// is taken from those that came, and the update's error counts only
	// if they do not name one.
	_, updateErr := apt.run(ctx, 3*time.Minute, "apt-get", "update")
	// The metapackage depends on the current ABI's -dbg package.
	show, err := apt.run(ctx, time.Minute, "apt-cache", "show", "--no-all-versions", "linux-image-686-pae-dbg")
	if err != nil {
		if updateErr != nil {
			return DebianKernel{}, &archiveError{debianArchive, updateErr}
		}
		return DebianKernel{}, err
	}
	m := dbgDepends.FindSubmatch(show)
	if m == nil {
		return DebianKernel{}, fmt.Errorf("apt-cache show linux-image-686-pae-dbg: no Depends on a linux-image-*-dbg package:\n%s", show)
	}
	k := DebianKernel{Release: string(m[1]), Version: string(m[2])}
	tmp, err := os.MkdirTemp(dir, "download-")
	if err != nil {
		return k, err
	}
	defer os.RemoveAll(tmp)
	pkgs := []string{"linux-image-" + k.Release + "-unsigned", "linux-image-" + k.Release + "-dbg"}
	apt.dir = tmp
	if _, err := apt.run(ctx, 15*time.Minute, "apt-get", append([]string{"download"}, pkgs...)...); err != nil {
		return k, &archiveError{debianArchive, err}
	}
	for i, dst := range []*string{&k.Image, &k.Dbg} {
		if *dst, err = keepDownload(tmp, pkgs[i], dir); err != nil {
			return k, err
		}
	}
	idx := k
	idx.Image, idx.Dbg = filepath.Base(k.Image), filepath.Base(k.Dbg)
	data, err := json.MarshalIndent(idx, "", "\t")
	if err != nil {
		return k, err
	}
	return k, atomicfile.WriteFile(filepath.Join(dir, index686PAE), data)
}

// keepDownload moves the package pkg that apt-get download left in tmp
// into the cache dir, named by its digest, and returns its path there.
func keepDownload(tmp, pkg, dir string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(tmp, pkg+"_*.deb"))
	if len(matches) != 1 {
		return "", fmt.Errorf("apt-get download %s: %d files", pkg, len(matches))
	}
	sum, err := fileDigest(matches[0])
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, sum+".deb")
	return p, os.Rename(matches[0], p)
}

// digestDeb is a package's name in the cache.
var digestDeb = regexp.MustCompile(`^[0-9a-f]{64}\.deb$`)

// readIndex returns the fetched kernel the index names, if its packages
// are in the cache under their digests.
func readIndex(dir string) (DebianKernel, error) {
	var k DebianKernel
	data, err := os.ReadFile(filepath.Join(dir, index686PAE))
	if err != nil {
		return k, err
	}
	if err := json.Unmarshal(data, &k); err != nil {
		return k, err
	}
	for _, p := range []*string{&k.Image, &k.Dbg} {
		if !digestDeb.MatchString(*p) {
			return k, fmt.Errorf("index names %q", *p)
		}
		*p = filepath.Join(dir, *p)
		if _, err := os.Stat(*p); err != nil {
			return k, err
		}
	}
	return k, nil
}

// aptI386 runs apt-get and apt-cache for i386 packages with a private
// state directory.
type aptI386 struct {
	state string // lists and archives
	dir   string // working directory (apt-get download writes there)
}

func newAptI386(dir string) *aptI386 {
	return &aptI386{state: filepath.Join(dir, "apt"), dir: dir}
}

func (a *aptI386) run(ctx context.Context, timeout time.Duration, tool string, args ...string) ([]byte, error) {
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(a.state, d), 0o755); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opts := []string{
		"-q",
		"-o", "APT::Architecture=i386",
		"-o", "APT::Architectures::=i386",
		"-o", "Dir::State::Lists=" + filepath.Join(a.state, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(a.state, "cache"),
	}
	cmd := exec.CommandContext(ctx, tool, append(opts, args...)...)
	cmd.Dir = a.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	// apt-get update reports unreachable mirrors as warnings and exits 0.
	if tool == "apt-get" && bytes.Contains(stderr.Bytes(), []byte("Failed to fetch")) {
		return out, fmt.Errorf("%s %s: %s", tool, strings.Join(args, " "), bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

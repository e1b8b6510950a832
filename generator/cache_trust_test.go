package generator

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/cache"
)

// trustKernels are the x86_64 kernels of the testdata BTFHub corpus: two
// 6.1 builds whose entries issue 18 swapped, and 6.12, whose BTF it
// forged under 6.1.0-47's key.
const trustKernels = "6.1[.2]*"

func trustArgs(t *testing.T, dir string) Args {
	return Args{Objects: testObjects(t), Corpus: testCorpus(), Arch: []string{"x86_64"}, Kernels: trustKernels, CacheDir: dir}
}

// resultEntries maps the release of every kernel result entry of the
// cache in dir to its file, its key and its decoded result.
type resultEntry struct {
	path string
	key  cache.Key
	cr   cachedResult
}

func resultEntries(t *testing.T, dir string) map[string]resultEntry {
	t.Helper()
	out := map[string]resultEntry{}
	cacheEntries(t, dir, func(p string, k cache.Key, data []byte) {
		var cr cachedResult
		if gob.NewDecoder(bytes.NewReader(data)).Decode(&cr) == nil && cr.Key.Release != "" {
			out[cr.Key.Release] = resultEntry{p, k, cr}
		}
	})
	return out
}

// cacheEntries calls f with the file, key and data of every entry of the
// cache in dir.
func cacheEntries(t *testing.T, dir string, f func(path string, k cache.Key, data []byte)) {
	t.Helper()
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, "-d") {
			return nil
		}
		var k cache.Key
		if _, err := hex.Decode(k[:], []byte(strings.TrimSuffix(d.Name(), "-d"))); err != nil {
			return nil
		}
		if data, ok := c.Get(k); ok {
			f(p, k, data)
		}
		return nil
	})
}

// wholeRuns lists the files of the cache's whole-run entries (parts).
func wholeRuns(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	cacheEntries(t, dir, func(p string, _ cache.Key, data []byte) {
		if bytes.HasPrefix(data, partMagic) {
			out = append(out, p)
		}
	})
	return out
}

// dropWholeRuns removes the whole-run entries, so that a rerun goes
// kernel by kernel through the entries a test tampered with.
func dropWholeRuns(t *testing.T, dir string) {
	t.Helper()
	for _, p := range wholeRuns(t, dir) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCacheSwapped is issue 18's swap: 6.1.0-50's result entry copied over
// 6.1.0-47's. The run dropped 6.1.0-47 and blamed the corpus ("duplicate
// kernel"); now the entry is a miss with a warning, recomputed, and the
// output is the uncached one.
func TestCacheSwapped(t *testing.T) {
	dir := t.TempDir()
	args := trustArgs(t, dir)
	want := runResult(t, Args{Objects: args.Objects, Corpus: args.Corpus, Arch: args.Arch, Kernels: args.Kernels})
	runResult(t, args)
	entries := resultEntries(t, dir)
	a, b := entries["6.1.0-50-cloud-amd64"], entries["6.1.0-47-amd64"]
	if a.path == "" || b.path == "" {
		t.Fatalf("result entries of the two 6.1 kernels not found: %v", entries)
	}
	dropWholeRuns(t, dir) // before the copy: reading entries drops a swapped one
	copyFile(t, a.path, b.path)
	res := runResult(t, args)
	samePayload(t, res, want)
	if n := len(res.Report.Kernels); n != 3 || res.Report.CachedResults != 2 {
		t.Errorf("%d kernels, %d from the cache; want 3 and 2", n, res.Report.CachedResults)
	}
	warned(t, res, "another key")
}

// TestCacheForged is issue 18's forgery: a result entry carrying 6.12's
// BTF under 6.1.0-47's key, with its key and checksums right, as anyone
// who can write the cache can make it. The default mode trusts the cache
// owner and is fooled (a bound that needs the next test's mode); the
// verify mode checks it with the oracle against 6.1.0-47's full BTF,
// recomputes it with a warning and gives the uncached output.
func TestCacheForged(t *testing.T) {
	dir := t.TempDir()
	args := trustArgs(t, dir)
	want := runResult(t, Args{Objects: args.Objects, Corpus: args.Corpus, Arch: args.Arch, Kernels: args.Kernels})
	runResult(t, args)
	entries := resultEntries(t, dir)
	victim, donor := entries["6.1.0-47-amd64"], entries["6.12.118+deb12-amd64"]
	forged := donor.cr
	forged.Key = victim.cr.Key
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&forged); err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	put := func() {
		if err := c.Put(victim.key, b.Bytes()); err != nil {
			t.Fatal(err)
		}
	}

	dropWholeRuns(t, dir)
	put()
	if res := runResult(t, args); bytes.Equal(payloadOf(t, res), payloadOf(t, want)) {
		t.Error("default mode: the forged entry changed nothing; the test forges nothing")
	}

	put()
	args.CacheVerify = true
	res := runResult(t, args)
	samePayload(t, res, want)
	warned(t, res, "fails verification against the full BTF")
	if res.Report.CachedResults != 2 {
		t.Errorf("verify mode: %d results from the cache, want the 2 genuine ones", res.Report.CachedResults)
	}

	// The encoded payload is cached too, keyed by the entries: a forged
	// one is bytes no oracle checks, so verify mode encodes again.
	kc, err := openKernelCache(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	kc.storePayload(want.entries, []byte("BTFEMBED forged payload"))
	if got := payloadOf(t, runResult(t, args)); !bytes.Equal(got, payloadOf(t, want)) {
		t.Errorf("verify mode embedded a forged payload entry: %q", got[:min(len(got), 32)])
	}
}

// TestCacheUnusable: whatever is wrong with the cache directory, the run
// succeeds with the output of a run without cache and a warning naming
// the problem. Issue 18: a full disk, a read-only cache and an
// uncreatable directory failed the run; an unsafe directory was used.
func TestCacheUnusable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string // the cache directory
		warn  string
	}{
		{"full disk", func(t *testing.T) string {
			dir := t.TempDir()
			mount(t, "tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700")
			// Full before the run starts: the cache's tag cannot be
			// written either.
			if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, 2<<20), 0o600); !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("filling the 1 MB tmpfs: %v", err)
			}
			return dir
		}, "no space left on device"},
		{"read-only", func(t *testing.T) string {
			dir := t.TempDir()
			mount(t, dir, dir, "", unix.MS_BIND, "")
			mount(t, "", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
			return dir
		}, "read-only file system"},
		{"uncreatable", func(t *testing.T) string {
			file := filepath.Join(t.TempDir(), "file")
			os.WriteFile(file, nil, 0o644)
			return filepath.Join(file, "cache")
		}, "not a directory; running without the cache"},
		{"world-writable", func(t *testing.T) string {
			dir := t.TempDir()
			os.Chmod(dir, 0o777)
			return dir
		}, "writable by group or others"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t)
			args := trustArgs(t, dir)
			args.Kernels = "6.1.0-47*"
			want := runResult(t, Args{Objects: args.Objects, Corpus: args.Corpus, Arch: args.Arch, Kernels: args.Kernels})
			res := runResult(t, args)
			samePayload(t, res, want)
			warned(t, res, tc.warn)
		})
	}
}

func mount(t *testing.T, src, dir, fstype string, flags uintptr, data string) {
	t.Helper()
	if err := unix.Mount(src, dir, fstype, flags, data); err != nil {
		t.Skipf("mount %s: %v (needs CAP_SYS_ADMIN)", dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

func runResult(t *testing.T, args Args) *Result {
	t.Helper()
	res, err := Generate(context.Background(), &args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func samePayload(t *testing.T, got, want *Result) {
	t.Helper()
	if !bytes.Equal(payloadOf(t, got), payloadOf(t, want)) {
		t.Error("payload differs from the run without cache")
	}
}

func warned(t *testing.T, res *Result, want string) {
	t.Helper()
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, want) {
		t.Errorf("warnings %q do not say %q", w, want)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

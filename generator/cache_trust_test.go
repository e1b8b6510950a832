package generator

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
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

// TestCacheForged: result entries of 6.1.0-47 rewritten with their key
// and checksums right, as anyone who can write the cache can make them.
// The default mode trusts the cache owner and is fooled by each (a bound
// that needs the verify mode); the verify mode recomputes the result from
// the kernel read from the corpus, warns, and gives the uncached output,
// payload and report. Issue 18 forged the BTF (6.12's under 6.1.0-47's
// key); issue 33 kept the genuine BTF, which the oracle accepts, and
// forged what the predictions and the report rows are made of: the kernel
// facts (a bpf_func_id enum of one helper flips 9 programs from loads to
// fails, which an agent's Prune then drops), the reasons of a program
// cilium/ebpf refused, a relocation's outcome, the sizes.
func TestCacheForged(t *testing.T) {
	const victim, donor = "6.1.0-47-amd64", "6.12.118+deb12-amd64"
	for _, tc := range []struct {
		name  string
		forge func(t *testing.T, cr *cachedResult, entries map[string]resultEntry, set *relocationSet)
	}{
		{"6.12's BTF", func(t *testing.T, cr *cachedResult, entries map[string]resultEntry, _ *relocationSet) {
			key := cr.Key
			*cr = entries[donor].cr
			cr.Key = key
		}},
		{"kernel facts", func(t *testing.T, cr *cachedResult, _ map[string]resultEntry, _ *relocationSet) {
			facts := *cr.Facts
			facts.FuncIDs = facts.FuncIDs[:1]
			cr.Facts = &facts
		}},
		{"refused program", func(t *testing.T, cr *cachedResult, _ map[string]resultEntry, set *relocationSet) {
			// Every program's key: those that relocate are not refused.
			for i := range set.program {
				for _, key := range set.program[i] {
					if _, ok := cr.Refused[key]; !ok {
						cr.Refused[key] = []string{"forged: \x1b[2Jrefused"}
					}
				}
			}
		}},
		{"relocation outcome", func(t *testing.T, cr *cachedResult, _ map[string]resultEntry, _ *relocationSet) {
			for key, out := range cr.Outcomes {
				if !out.Unresolved {
					cr.Outcomes[key] = cachedOutcome{Unresolved: true, Status: "absent", Reason: "forged"}
				}
			}
		}},
		{"sizes", func(t *testing.T, cr *cachedResult, _ map[string]resultEntry, _ *relocationSet) { cr.Types++ }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := trustArgs(t, dir)
			want := runResult(t, Args{Objects: args.Objects, Corpus: args.Corpus, Arch: args.Arch, Kernels: args.Kernels})
			runResult(t, args)
			entries := resultEntries(t, dir)
			v := entries[victim]
			if v.path == "" || entries[donor].path == "" {
				t.Fatalf("result entries of %s and %s not found: %v", victim, donor, entries)
			}
			forged := resultEntries(t, dir)[victim].cr // decoded again: forge changes its maps
			tc.forge(t, &forged, entries, x86Set(t, args.Objects))
			put := putEntry(t, dir, v.key, &forged)

			dropWholeRuns(t, dir)
			put()
			if sameOutputs(t, runResult(t, args), want) {
				t.Fatal("default mode: the forged entry changed nothing; the test forges nothing")
			}

			put()
			args.CacheVerify = true
			res := runResult(t, args)
			if !sameOutputs(t, res, want) {
				t.Error("verify mode: the output differs from the run without cache")
			}
			warned(t, res, "fails verification against the full BTF")
			if res.Report.CachedResults != 2 {
				t.Errorf("verify mode: %d results from the cache, want the 2 genuine ones", res.Report.CachedResults)
			}
			// The recomputed result replaced the forged one.
			if got := resultEntries(t, dir)[victim].cr; !reflect.DeepEqual(got, v.cr) {
				t.Error("verify mode left the forged entry in the cache")
			}
		})
	}
}

// TestCacheForgedPayload: the encoded payload is cached too, keyed by
// the entries: a forged one is bytes no oracle checks, so verify mode
// encodes again.
func TestCacheForgedPayload(t *testing.T) {
	dir := t.TempDir()
	args := trustArgs(t, dir)
	want := runResult(t, args)
	kc, err := openKernelCache(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	kc.storePayload(want.contents(), []byte("BTFEMBED forged payload"))
	args.CacheVerify = true
	if got := payloadOf(t, runResult(t, args)); !bytes.Equal(got, payloadOf(t, want)) {
		t.Errorf("verify mode embedded a forged payload entry: %q", got[:min(len(got), 32)])
	}
}

// x86Set is the relocation set of the objects as a run pairs them with
// the x86_64 kernels (all the little-endian testdata objects).
func x86Set(t *testing.T, objs []string) *relocationSet {
	t.Helper()
	o, err := loadObjects(objs)
	if err != nil {
		t.Fatal(err)
	}
	set, err := newRelocationSet(o)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// putEntry returns a function that stores cr under key in the cache in
// dir, with its checksum right.
func putEntry(t *testing.T, dir string, key cache.Key, cr *cachedResult) func() {
	t.Helper()
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(cr); err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := c.Put(key, b.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
}

// sameOutputs reports whether two runs wrote the same payload and JSON
// report.
func sameOutputs(t *testing.T, a, b *Result) bool {
	t.Helper()
	out := func(r *Result) []byte {
		p := payloadOf(t, r) // first: it completes the report
		var js bytes.Buffer
		if err := r.Report.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		return append(p, js.Bytes()...)
	}
	return bytes.Equal(out(a), out(b))
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

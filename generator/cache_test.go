package generator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"

	"github.com/btfembed/btfembed/internal/cache"
)

// testRoots is the testdata corpus with module BTF, so cached entries
// hold modules too.
func testRoots() []string {
	return []string{filepath.Join(kerneltest.Dir(), "btfhub"), filepath.Join(kerneltest.Dir(), "corpus-extra")}
}

// testKernels limits the cache and shard tests to two kernels (one with
// modules) under -short; they run Generate many times.
func testKernels() string {
	if testing.Short() {
		return "6.1.0-5*"
	}
	return ""
}

// run generates and returns the payload and the report as JSON: the two
// outputs that must not depend on the cache.
func run(t *testing.T, args Args) ([]byte, []byte, *Report) {
	t.Helper()
	res, err := Generate(context.Background(), &args)
	if err != nil {
		t.Fatal(err)
	}
	p := payloadOf(t, res) // first: it completes the report
	var js bytes.Buffer
	if err := res.Report.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	return p, js.Bytes(), res.Report
}

// uncached is the output with the cache off, once per object list.
var uncached sync.Map

func wantOutput(t *testing.T, objs []string) ([]byte, []byte) {
	t.Helper()
	key := strings.Join(objs, "\x00")
	if v, ok := uncached.Load(key); ok {
		out := v.([2][]byte)
		return out[0], out[1]
	}
	p, js, _ := run(t, Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels()})
	uncached.Store(key, [2][]byte{p, js})
	return p, js
}

func sameOutput(t *testing.T, what string, objs []string, payload, report []byte) {
	t.Helper()
	wantP, wantR := wantOutput(t, objs)
	if !bytes.Equal(payload, wantP) {
		t.Errorf("%s: payload differs from the run without cache", what)
	}
	if !bytes.Equal(report, wantR) {
		t.Errorf("%s: report differs from the run without cache:\n%s\nwant:\n%s", what, report, wantR)
	}
}

// TestCacheRerun: a cold run fills the cache, a rerun takes every kernel's
// result from it, and both give the bytes of a run without a cache.
func TestCacheRerun(t *testing.T) {
	objs := testObjects(t)
	dir := t.TempDir()
	p, r, rep := run(t, Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})
	sameOutput(t, "cold", objs, p, r)
	if rep.CachedResults != 0 || rep.CachedBTF != 0 {
		t.Errorf("cold run: %d results and %d BTF from an empty cache", rep.CachedResults, rep.CachedBTF)
	}
	p, r, rep = run(t, Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir, Workers: 1})
	sameOutput(t, "rerun", objs, p, r)
	if rep.CachedResults != len(rep.Kernels) {
		t.Errorf("rerun: %d of %d kernels from the cache", rep.CachedResults, len(rep.Kernels))
	}
}

// TestCacheWholeRun: a run stores its whole result once, and an
// identical rerun takes it without the kernels' entries (they are removed
// here), with the bytes of a run without a cache. A whole-run entry
// swapped for another entry's bytes is refused with a warning and the
// run recomputed; verify mode never takes the whole run, and a run with
// other arguments has another key. The rerun, which loads no object,
// still warns about the object without CO-RE relocations.
func TestCacheWholeRun(t *testing.T) {
	objs := append(testObjects(t), filepath.Join(kerneltest.CiliumTestdata(t), "tags-el.elf"))
	dir := t.TempDir()
	args := Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir}
	run(t, args)
	whole := wholeRuns(t, dir)
	if len(whole) != 1 {
		t.Fatalf("%d whole-run entries after one run, want 1", len(whole))
	}
	cacheEntries(t, dir, func(p string, _ cache.Key, data []byte) {
		if !bytes.HasPrefix(data, partMagic) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	})

	p, r, rep := run(t, args)
	sameOutput(t, "whole rerun", objs, p, r)
	if rep.CachedResults != len(rep.Kernels) {
		t.Errorf("whole rerun: %d of %d kernels from the cache", rep.CachedResults, len(rep.Kernels))
	}
	warned(t, runResult(t, args), "tags-el.elf: no CO-RE relocations")

	verify := args
	verify.CacheVerify = true
	_, _, rep = run(t, verify)
	if rep.CachedResults != 0 {
		t.Errorf("verify mode: %d results from the cache, which holds the whole run only", rep.CachedResults)
	}

	// A kernel entry (written again by the verify run) copied over the
	// whole run's.
	var kernel string
	cacheEntries(t, dir, func(p string, _ cache.Key, data []byte) {
		if !bytes.HasPrefix(data, partMagic) {
			kernel = p
		}
	})
	copyFile(t, kernel, whole[0])
	res := runResult(t, args)
	wantP, _ := wantOutput(t, objs)
	if !bytes.Equal(payloadOf(t, res), wantP) {
		t.Error("swapped whole run: payload differs from the run without cache")
	}
	warned(t, res, "another key")

	fewer := args
	fewer.Kernels = "6.1.0-47*"
	got := runResult(t, fewer)
	want := runResult(t, Args{Objects: objs, Corpus: testRoots(), Kernels: fewer.Kernels})
	samePayload(t, got, want)
	if len(got.Report.Kernels) != 1 {
		t.Errorf("%d kernels for %s", len(got.Report.Kernels), fewer.Kernels)
	}
}

// TestCacheObjects: an object that adds no relocation (a copy of one
// already there, under another name) hits; another object set misses the
// results but reuses the kernels' BTF. Rows name the objects of the run.
func TestCacheObjects(t *testing.T) {
	objs := testObjects(t)
	dir := t.TempDir()
	run(t, Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})

	cp := filepath.Join(t.TempDir(), "copy-el.o")
	data, err := os.ReadFile(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cp, data, 0o644)
	more := append(append([]string(nil), objs...), cp)
	p, r, rep := run(t, Args{Objects: more, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})
	sameOutput(t, "with a duplicate object", more, p, r)
	if rep.CachedResults != len(rep.Kernels) {
		t.Errorf("duplicate object: %d of %d kernels from the cache", rep.CachedResults, len(rep.Kernels))
	}

	fewer := objs[1:]
	p, r, rep = run(t, Args{Objects: fewer, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})
	sameOutput(t, "with an object less", fewer, p, r)
	if rep.CachedResults != 0 || rep.CachedBTF != len(rep.Kernels) {
		t.Errorf("other objects: %d results and %d BTF of %d kernels from the cache, want 0 and all",
			rep.CachedResults, rep.CachedBTF, len(rep.Kernels))
	}
}

// TestCacheCorrupt: damaged entries of every kind are recomputed and
// replaced; the output never changes.
func TestCacheCorrupt(t *testing.T) {
	objs := testObjects(t)
	for _, damage := range []struct {
		name string
		fn   func([]byte) []byte
	}{
		{"flipped", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir := t.TempDir()
			run(t, Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})
			n := 0
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && (strings.HasSuffix(p, "-d") || strings.HasSuffix(p, "-s")) {
					b, _ := os.ReadFile(p)
					os.WriteFile(p, damage.fn(b), 0o644)
					n++
				}
				return nil
			})
			if n == 0 {
				t.Fatal("no cache entries to damage")
			}
			p, r, rep := run(t, Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})
			sameOutput(t, "damaged cache", objs, p, r)
			if rep.CachedResults != 0 || rep.CachedBTF != 0 {
				t.Errorf("%d results and %d BTF read from damaged entries", rep.CachedResults, rep.CachedBTF)
			}
			_, _, rep = run(t, Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})
			if rep.CachedResults != len(rep.Kernels) {
				t.Errorf("after repair: %d of %d kernels from the cache", rep.CachedResults, len(rep.Kernels))
			}
		})
	}
}

// TestCacheConcurrent: runs sharing one cache at once, cold and then
// warm, all give the uncached output.
func TestCacheConcurrent(t *testing.T) {
	objs := testObjects(t)
	dir := t.TempDir()
	wantOutput(t, objs) // computed here: t.Fatal cannot run in the goroutines
	for _, phase := range []string{"cold", "warm"} {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				res, err := Generate(context.Background(), &Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir, Workers: 1})
				if err != nil {
					t.Error(err)
					return
				}
				p, err := res.Payload()
				if err != nil {
					t.Error(err)
					return
				}
				var js bytes.Buffer
				res.Report.WriteJSON(&js)
				sameOutput(t, phase, objs, p, js.Bytes())
			})
		}
		wg.Wait()
	}
}

// TestCacheRelocationGroups: the result cache is keyed by relocation
// groups, not objects. An object whose groups are all among the others'
// (testdata/objects/cachehit: fields.c storing elsewhere) hits, and its
// report rows and load predictions, rebuilt from the cached groups and
// the cached minimized BTF, are those of a run without cache; an object
// with a group more misses.
func TestCacheRelocationGroups(t *testing.T) {
	objs := testObjects(t)
	dir := t.TempDir()
	run(t, Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})
	for _, tc := range []struct {
		object string
		hit    bool
	}{
		{"same_groups-el.o", true},
		{"new_group-el.o", false},
	} {
		obj := filepath.Join(kerneltest.Dir(), "objects", "cachehit", tc.object)
		more := append(slices.Clone(objs), obj)
		p, r, rep := run(t, Args{Objects: more, Corpus: testRoots(), Kernels: testKernels(), CacheDir: dir})
		sameOutput(t, tc.object, more, p, r)
		want := 0
		if tc.hit {
			want = len(rep.Kernels)
		}
		if rep.CachedResults != want {
			t.Errorf("adding %s: %d of %d kernels from the cache, want %d", tc.object, rep.CachedResults, len(rep.Kernels), want)
		}
		for _, k := range rep.Kernels {
			if !slices.ContainsFunc(k.Programs, func(p ProgramReport) bool { return p.Object == obj }) {
				t.Errorf("adding %s: no prediction for its programs on %s", tc.object, k.key())
			}
		}
	}
}

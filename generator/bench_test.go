package generator

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/btfload"
	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// benchCorpus writes the corpus of scripts/bench-generate-vs-bpftool.sh
// into dir: 12 kernels of raw BTF in the BTFHub layout, the testdata
// kernels and the running kernel's (when readable), then copies of those
// under other release names. The cache is off in the benchmarks, so every
// kernel is read, minimized and verified.
func benchCorpus(b *testing.B, dir string) {
	b.Helper()
	ks := kerneltest.Corpus(b)
	if _, err := kerneltest.RunningBTF(); err == nil {
		host := kerneltest.Running(b)
		host.Name = "host/1/" + host.Arch + "/" + host.Release
		ks = append(ks[:len(ks):len(ks)], host)
	}
	for i := range 12 {
		k := ks[i%len(ks)]
		release := k.Release
		if i >= len(ks) {
			release = fmt.Sprintf("%s+copy%d", k.Release, i)
		}
		d := filepath.Join(dir, filepath.Dir(filepath.Dir(k.Name)), k.Arch)
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, release+".btf"), k.BTF, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// benchObjects are the 18 objects of scripts/bench-generate-vs-bpftool.sh.
func benchObjects(b *testing.B) []string {
	b.Helper()
	root := kerneltest.Dir()
	cilium := kerneltest.CiliumTestdata(b)
	var objs []string
	for _, pattern := range []string{
		filepath.Join(root, "objects", "*-el.o"),
		filepath.Join(root, "..", "internal", "coremin", "testdata", "*-el.o"),
		filepath.Join(cilium, "relocs-el.elf"), filepath.Join(cilium, "relocs_enum-el.elf"),
		filepath.Join(cilium, "relocs_read-el.elf"), filepath.Join(cilium, "relocs_read_tgt-el.elf"),
		filepath.Join(cilium, "tags-el.elf"),
		filepath.Join(cilium, "..", "..", "testdata", "errors-el.elf"),
		filepath.Join(cilium, "..", "..", "testdata", "manyprogs-el.elf"),
		filepath.Join(root, "..", "examples", "execsnoop", "bpf_x86_bpfel.o"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			b.Fatalf("no object %s: %v", pattern, err)
		}
		objs = append(objs, m...)
	}
	return objs
}

// BenchmarkGenerate is a cold generate (cache off) of the 12-kernel
// corpus, with and without testdata/objects/big (33,857 relocations), on
// one and two workers. cpu-ms/op is the process's CPU time (user +
// system, every thread) per run, the figure to compare on a shared
// machine; profile with -cpuprofile:
//
//	go test ./generator -run X -bench Generate/objects/workers=1 -benchtime 5x -cpuprofile /tmp/cpu.out
func BenchmarkGenerate(b *testing.B) {
	dir := b.TempDir()
	benchCorpus(b, dir)
	objs := benchObjects(b)
	big := filepath.Join(kerneltest.Dir(), "objects", "big", "big-el.o")
	for _, set := range []struct {
		name string
		objs []string
	}{
		{"objects", objs},
		{"objects+big", append(objs[:len(objs):len(objs)], big)},
	} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", set.name, workers), func(b *testing.B) {
				args := &Args{Objects: set.objs, Corpus: []string{dir}, Workers: workers}
				start := cpuTime(b)
				for b.Loop() {
					if _, err := Generate(context.Background(), args); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((cpuTime(b)-start).Milliseconds())/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// BenchmarkRerun is an identical rerun of BenchmarkGenerate's objects on
// its corpus with a warm cache: what a go:generate that changed nothing
// costs, in process (the command adds its start-up). Profile with
// -cpuprofile as above.
func BenchmarkRerun(b *testing.B) {
	dir := b.TempDir()
	benchCorpus(b, dir)
	// The cache's stat index does not trust files modified in the last
	// seconds (docs/cache.md); a corpus is older than that.
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(path, old, old)
	})
	if err != nil {
		b.Fatal(err)
	}
	args := &Args{Objects: benchObjects(b), Corpus: []string{dir}, Workers: 1, CacheDir: b.TempDir()}
	if _, err := Generate(context.Background(), args); err != nil {
		b.Fatal(err)
	}
	start := cpuTime(b)
	for b.Loop() {
		res, err := Generate(context.Background(), args)
		if err != nil {
			b.Fatal(err)
		}
		if n := res.Report.CachedResults; n != len(res.Report.Kernels) {
			b.Fatalf("%d of %d kernels from the cache", n, len(res.Report.Kernels))
		}
	}
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
}

// cpuTime is the CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkKernelParse is what each parse of a kernel's BTF costs, once
// per kernel in a cold run: coremin.NewTarget (rawbtf's index, for
// Match and Minimize) and cilium/ebpf's lazy load, for the oracle and
// the prediction against the full BTF, as the corpus reader calls it
// (btfload.Spec) and from raw bytes (btf.LoadSpecFromReader).
func BenchmarkKernelParse(b *testing.B) {
	k := kerneltest.ByName(b, "6.12.118+deb12-amd64")
	b.Run("rawbtf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := coremin.NewTarget(k.BTF, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("btfload", func(b *testing.B) {
		// As the corpus reader calls it, with the index it checked the
		// kernel with.
		index, err := rawbtf.Parse(k.BTF, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := btfload.Spec(k.BTF, index); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cilium", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := btf.LoadSpecFromReader(bytes.NewReader(k.BTF)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

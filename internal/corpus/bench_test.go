package corpus

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// hubFiles lists the archives of testCorpus.
func hubFiles(tb testing.TB) [][]byte {
	tb.Helper()
	var files [][]byte
	for _, tk := range testKernels {
		files = append(files, hubFile(tb, tk.key))
	}
	return files
}

// BenchmarkRead reads the testdata corpus end to end (walk, read, xz, tar,
// BTF validation) and reports kernels per second, CPU time per kernel and,
// with one worker, the share of the time spent decompressing.
func BenchmarkRead(b *testing.B) {
	for _, workers := range []int{1, 0} {
		name := "workers=all"
		if workers == 1 {
			name = "workers=1"
		}
		b.Run(name, func(b *testing.B) {
			opts := &Options{Workers: workers}
			files := hubFiles(b)
			n := 0
			var read, dec, cpu time.Duration
			for b.Loop() {
				t, c := time.Now(), processCPU(b)
				for _, err := range Read(b.Context(), []string{testCorpus}, opts) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				read += time.Since(t)
				cpu += processCPU(b) - c
				if workers != 1 {
					continue
				}
				// The same decompression alone, measured in the same
				// conditions, for its share of the end-to-end time.
				t = time.Now()
				for _, f := range files {
					if _, err := decompressXZ(f); err != nil {
						b.Fatal(err)
					}
				}
				dec += time.Since(t)
			}
			b.ReportMetric(float64(n)/read.Seconds(), "kernels/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/kernel")
			if workers == 1 {
				b.ReportMetric(100*dec.Seconds()/read.Seconds(), "%extract.Decompress")
			}
		})
	}
}

// BenchmarkXZ compares the xz decoder this package uses with the xz
// command on the testdata archives, alternating file by file so both see
// the same machine load: cpu-ns/kernel is this process's user+system time
// for the Go decoder and the child's for the command; cpu-ratio is the
// first over the second. Pin it to one CPU (taskset -c 0) so that
// garbage collection runs on the same CPU as the decoder.
func BenchmarkXZ(b *testing.B) {
	if _, err := exec.LookPath("xz"); err != nil {
		b.Skip("xz command not installed")
	}
	files := hubFiles(b)
	var goCPU, cmdCPU time.Duration
	for b.Loop() {
		for _, f := range files {
			cpu0 := processCPU(b)
			if _, err := decompressXZ(f); err != nil {
				b.Fatal(err)
			}
			goCPU += processCPU(b) - cpu0
			cmd := exec.Command("xz", "-dc")
			cmd.Stdin = bytes.NewReader(f)
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			cmdCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
	}
	n := float64(b.N * len(files))
	b.ReportMetric(float64(goCPU.Nanoseconds())/n, "go-cpu-ns/kernel")
	b.ReportMetric(float64(cmdCPU.Nanoseconds())/n, "xz-cpu-ns/kernel")
	b.ReportMetric(goCPU.Seconds()/cmdCPU.Seconds(), "cpu-ratio")
}

// processCPU is the user+system time this process has used, garbage
// collection included.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWriteBTFHub measures writing one kernel's archive (xz encoding).
func BenchmarkWriteBTFHub(b *testing.B) {
	k := testKernels[2].key
	btf := hubBTF(b, k)
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if err := writeBTFHub(&out, k.Release, btf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.Len()), "bytes")
	b.ReportMetric(float64(len(hubFile(b, k))), "btfhub-bytes")
}

// BenchmarkImport measures importing each large input of the shared corpus.
func BenchmarkImport(b *testing.B) {
	shared := kerneltest.SharedCorpus(b)
	inputs := map[string]string{
		"deb":        filepath.Join(shared, "packages", "linux-image-6.1.0-50-cloud-amd64-unsigned_6.1.176-1_amd64.deb"),
		"bzImage-xz": filepath.Join(shared, "images", "vmlinuz-6.1.0-47-amd64"),
	}
	for name, in := range inputs {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				out := b.TempDir()
				if _, err := Import(b.Context(), out, []string{in}, &ImportOptions{Strict: true}); err != nil {
					b.Fatal(err)
				}
				os.RemoveAll(out)
			}
		})
	}
}

package pahole

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors of Encode when pahole is killed at a limit (the package
// doc, Limits).
var (
	// ErrTimeLimit: pahole ran longer than its input's time limit.
	ErrTimeLimit = errors.New("over its time limit")
	// ErrMemoryLimit: pahole's resident memory grew over its input's limit.
	ErrMemoryLimit = errors.New("over its memory limit")
)

// The limits of one run, from the package doc's table. A run's input size
// is inputSize's.
const (
	// timeBase plus timePerMiB for each MiB of input bounds the wall clock:
	// 20 times and more what pahole took on the real inputs measured.
	timeBase   = 2 * time.Minute
	timePerMiB = 3 * time.Second
	// memoryBase plus memoryPerByte times the input plus memoryPerThread
	// for each of pahole's threads bounds its resident memory: 2.5 times
	// and more what it took on the real inputs measured.
	memoryBase      = 512 << 20
	memoryPerByte   = 2
	memoryPerThread = 16 << 20
	// sampleEvery is how often the resident memory is read.
	sampleEvery = 50 * time.Millisecond
	// maxInflate bounds how much a compressed section may claim to grow:
	// zlib and zstd shrink a kernel's DWARF by 2 to 5 times.
	maxInflate = 8
)

// limits bounds one pahole run. The watcher kills pahole's process group
// when the time is up or when the resident memory it samples (RSS plus
// swap of the process started) is over memory; data is pahole's
// RLIMIT_DATA, which the kernel enforces on every allocation, against a
// growth faster than the sampling and the children pahole could start.
type limits struct {
	time   time.Duration
	memory int64
	data   int64
	// timeWhy and memoryWhy say how time and memory follow from the
	// input, for errors.
	timeWhy, memoryWhy string
}

// limitsFor returns the limits of a run on an input of size bytes (as
// inputSize counts them) by pahole with threads threads.
func limitsFor(size int64, threads int) limits {
	mib := size >> 20
	memory := memoryBase + memoryPerByte*size + int64(threads)*memoryPerThread
	return limits{
		time:   timeBase + time.Duration(mib)*timePerMiB,
		memory: memory,
		// Twice the resident limit, plus the thread stacks, which count
		// as data though they are hardly touched (the package doc).
		data:      2*memory + int64(threads)*threadStack(),
		timeWhy:   fmt.Sprintf("%v + %v per MiB of a %s input", timeBase, timePerMiB, megabytes(size)),
		memoryWhy: fmt.Sprintf("%d MiB + %d times the %s input + %d MiB for each of %d threads", memoryBase>>20, memoryPerByte, megabytes(size), memoryPerThread>>20, threads),
	}
}

// megabytes prints n bytes in MB, as file sizes are quoted.
func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// inputSize is the size pahole's time and memory follow for the ELF file
// f of size bytes: the file's, plus what its compressed sections
// (SHF_COMPRESSED, which libelf inflates into memory; kernels built with
// CONFIG_DEBUG_INFO_COMPRESSED have them) grow to, each counted at most
// maxInflate times its size, and the whole at most maxInflate times the
// file, so that a crafted header cannot raise the limits much. A file
// debug/elf cannot read counts at its size: pahole fails on it soon.
func inputSize(f *os.File, size int64) (n int64) {
	n = size
	defer func() {
		if recover() != nil {
			n = size
		}
	}()
	ef, err := elf.NewFile(f)
	if err != nil {
		return size
	}
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_COMPRESSED == 0 || s.Type == elf.SHT_NOBITS {
			continue
		}
		// A section holds no more than the file, whatever its header says.
		stored := min(s.FileSize, uint64(size))
		if grown := min(s.Size, maxInflate*stored); grown > stored {
			n += int64(grown - stored)
		}
	}
	return min(n, maxInflate*size)
}

// paholeThreads is how many threads pahole runs with flags: with -j, one
// per online CPU plus 10 % (pahole's default for -j, counted the way
// glibc's sysconf(_SC_NPROCESSORS_ONLN) counts them), and the main one.
func paholeThreads(flags []string) int {
	if !slices.Contains(flags, "-j") {
		return 1
	}
	return int(float64(onlineCPUs())*1.1) + 1
}

// onlineCPUs counts the CPUs in /sys/devices/system/cpu/online ("0-3,8"),
// which can be more than runtime.NumCPU, the CPUs this process may run on.
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for r := range strings.SplitSeq(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || b < a {
			return runtime.NumCPU()
		}
		n += b - a + 1
	}
	return max(n, runtime.NumCPU())
}

// timeError is the error of a run on file killed at l.time.
func (l limits) timeError(file string) error {
	return fmt.Errorf("pahole on %s: killed after %v: %w (%s)", file, l.time, ErrTimeLimit, l.timeWhy)
}

// memoryError is the error of a run on file killed with resident bytes
// over l.memory, in MiB rounded up so that the figure is over the limit.
func (l limits) memoryError(file string, resident int64) error {
	return fmt.Errorf("pahole on %s: killed at %d MiB resident: %w of %d MiB (%s)", file, (resident+1<<20-1)>>20, ErrMemoryLimit, l.memory>>20, l.memoryWhy)
}

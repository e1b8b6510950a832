package pahole

import (
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// raceDetector is set by race_test.go.
var raceDetector bool

// killPIDFile kills, when the test has failed, the process whose ID a
// fake pahole wrote to file, if its command line still holds name: a run
// that was not killed leaves it running.
func killPIDFile(t *testing.T, file, name string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return
		}
		if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.Contains(string(cmdline), name) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// encodeWithin runs a fake pahole on a one-byte input.elf under lim, and
// fails the test if Encode has not returned within d. It returns the
// input's path, how long Encode took and its error.
func encodeWithin(t *testing.T, fake string, lim limits, d time.Duration) (string, time.Duration, error) {
	t.Helper()
	input := filepath.Join(t.TempDir(), "input.elf")
	if err := os.WriteFile(input, []byte{0}, 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Tool{Path: fake, Version: Version{1, 24}}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := p.encode(context.Background(), Job{ELF: input}, 1, lim)
		done <- err
	}()
	select {
	case err := <-done:
		return input, time.Since(start), err
	case <-time.After(d):
		t.Fatalf("pahole still running after %v: not killed at its limits %+v", d, lim)
		return "", 0, nil
	}
}

// gone tells whether process pid has exited (a zombie left to init has).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(after, "Z")
}

// TestEncodeTimeLimit runs a pahole that never exits, with a child that
// holds its output: the run is killed at its time limit, child included,
// and the error says so.
func TestEncodeTimeLimit(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "sleep.pid")
	killPIDFile(t, pidFile, "sleep")
	fake := filepath.Join(dir, "pahole")
	script := "#!/bin/sh\nsleep 1000 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	lim := limits{time: time.Second, memory: 1 << 30, data: 4 << 30, timeWhy: "the test's"}
	input, took, err := encodeWithin(t, fake, lim, 20*time.Second)
	if !errors.Is(err, ErrTimeLimit) {
		t.Fatalf("Encode of a pahole that hangs: %v, want ErrTimeLimit", err)
	}
	for _, want := range []string{input, "killed after 1s", "the test's"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if took > 5*time.Second {
		t.Errorf("Encode returned after %v, with a limit of 1s", took)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !gone(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pahole's child %d outlived the kill", pid)
		}
	}
}

// growingPahole makes the test binary a pahole that grows (fake_test.go)
// and returns its path.
func growingPahole(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pahole.pid")
	killPIDFile(t, pidFile, exe)
	t.Setenv(fakeEnv, "grow")
	t.Setenv(fakePIDEnv, pidFile)
	return exe
}

// TestEncodeMemoryLimit runs a pahole whose memory grows: the run is
// killed once its resident memory is over the limit, and the error says
// at how much.
func TestEncodeMemoryLimit(t *testing.T) {
	fake := growingPahole(t)
	lim := limits{time: time.Minute, memory: 96 << 20, data: fakeGrowCap * 2, memoryWhy: "the test's"}
	input, took, err := encodeWithin(t, fake, lim, 30*time.Second)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("Encode of a pahole that grows: %v, want ErrMemoryLimit", err)
	}
	for _, want := range []string{input, "resident", "of 96 MiB", "the test's"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	t.Logf("%v after %v", err, took)
}

// TestEncodeDataLimit runs a pahole whose memory grows, with the sampled
// limit out of reach: RLIMIT_DATA, set in the child, stops it, and the
// error says how close it came.
func TestEncodeDataLimit(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's shadow memory does not fit the fake pahole's RLIMIT_DATA")
	}
	fake := growingPahole(t)
	lim := limits{time: time.Minute, memory: fakeGrowCap * 2, data: 256 << 20}
	_, _, err := encodeWithin(t, fake, lim, 30*time.Second)
	if err == nil || errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("Encode of a pahole that grows past RLIMIT_DATA: %v, want its own failure", err)
	}
	// Exit status 2 is the Go runtime's fatal "out of memory" when mmap
	// fails; without the limit the fake grows to 1 GiB and sleeps.
	for _, want := range []string{"exit status 2", "of its 256 MiB RLIMIT_DATA"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %.300q does not say %q", err, want)
		}
	}
}

// TestLimitsFor checks the limits against what pahole took on real
// inputs (the package doc's table): each must stay far from its limits.
func TestLimitsFor(t *testing.T) {
	for _, tt := range []struct {
		input   string
		size    int64
		threads int
		rss     int64         // peak RSS, /usr/bin/time -v
		vmData  int64         // peak VmData sampled every 20 ms, where measured
		took    time.Duration // wall clock, the slowest seen (a loaded machine)
	}{
		{"nobtf 6.1.176 vmlinux, -j on 2 CPUs", 106806824, 3, 203512 << 10, 246228 << 10, 18 * time.Second},
		{"nobtf 6.1.176 vmlinux, -j16", 106806824, 17, 240364 << 10, 384852 << 10, 18 * time.Second},
		{"nobtf 6.1.176 vmlinux, debug sections zlib-compressed", 65395448 + 41411386, 3, 257480 << 10, 285584 << 10, 5 * time.Second},
		{"Debian 12 cloud-amd64 -dbg vmlinux (docs/corpus.md)", 588_000_000, 3, 453_000_000, 0, 41 * time.Second},
		{"Debian 12 686-pae -dbg vmlinux (issue 33)", 316_000_000, 3, 424_000_000, 0, 38 * time.Second},
		{"small module", 3320, 3, 3276 << 10, 0, time.Second},
	} {
		lim := limitsFor(tt.size, tt.threads)
		if lim.memory < tt.rss*5/2 {
			t.Errorf("%s: memory limit %d MiB, less than 2.5 times the %d MiB measured", tt.input, lim.memory>>20, tt.rss>>20)
		}
		if lim.data < lim.memory*2 || lim.data < tt.vmData*4 {
			t.Errorf("%s: RLIMIT_DATA %d MiB, less than twice the memory limit or 4 times the %d MiB measured", tt.input, lim.data>>20, tt.vmData>>20)
		}
		if lim.time < tt.took*20 {
			t.Errorf("%s: time limit %v, less than 20 times the %v measured", tt.input, lim.time, tt.took)
		}
	}
	// The crafted 10.7 MB DWARF ELF of issue 33 had pahole at 1 GB after
	// 240 s: both limits stop it sooner.
	if lim := limitsFor(10_700_000, 3); lim.memory >= 1<<30 || lim.time >= 240*time.Second {
		t.Errorf("limits of a 10.7 MB input %+v let issue 33's pahole reach 1 GB or 240 s", lim)
	}
}

// TestInputSize compiles an object with compressed debug sections: its
// size for the limits counts them inflated, but not as much as a crafted
// header claims.
func TestInputSize(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no cc to compile the test objects")
	}
	dir := t.TempDir()
	compileGz := func(gz string) string {
		out := filepath.Join(dir, "mod-"+gz+".o")
		if b, err := exec.Command("cc", "-O2", "-g", "-gz="+gz, "-c", filepath.Join("testdata", "mod.c"), "-o", out).CombinedOutput(); err != nil {
			t.Skipf("cc -gz=%s: %v\n%s", gz, err, b)
		}
		return out
	}
	plain, z := compileGz("none"), compileGz("zlib")
	// The same object claiming its .debug_info inflates to 2^62 bytes.
	crafted := filepath.Join(dir, "crafted.o")
	b, err := os.ReadFile(z)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(z)
	if err != nil {
		t.Fatal(err)
	}
	info, order := ef.Section(".debug_info"), ef.ByteOrder
	ef.Close()
	if info == nil || info.Flags&elf.SHF_COMPRESSED == 0 {
		t.Fatal("cc -gz=zlib made no compressed .debug_info")
	}
	// Elf64_Chdr: ch_type, ch_reserved, then ch_size.
	order.PutUint64(b[info.Offset+8:], 1<<62)
	if err := os.WriteFile(crafted, b, 0o600); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("not an ELF file"), 0o600); err != nil {
		t.Fatal(err)
	}
	size := func(path string) (file, input int64) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return st.Size(), inputSize(f, st.Size())
	}
	plainFile, plainInput := size(plain)
	zFile, zInput := size(z)
	craftedFile, craftedInput := size(crafted)
	junkFile, junkInput := size(junk)
	if plainInput != plainFile {
		t.Errorf("uncompressed object of %d bytes counts %d", plainFile, plainInput)
	}
	if zFile >= plainFile || zInput <= zFile || zInput > maxInflate*zFile {
		t.Errorf("compressed object of %d bytes (%d uncompressed) counts %d", zFile, plainFile, zInput)
	}
	if craftedInput <= zInput || craftedInput > maxInflate*craftedFile {
		t.Errorf("object of %d bytes claiming 2^62 counts %d, want at most %d", craftedFile, craftedInput, maxInflate*craftedFile)
	}
	if junkInput != junkFile {
		t.Errorf("a file that is not ELF counts %d, want its size %d", junkInput, junkFile)
	}
}

// TestEncodeVMLinuxLimits runs the installed pahole on the shared corpus's
// 107 MB DWARF vmlinux: the limits Encode sets must not stop a real
// kernel (it takes about 200 MiB and a few seconds), and limits below
// that kill it, saying which.
func TestEncodeVMLinuxLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("pahole on a 107 MB vmlinux: not under -short")
	}
	p := tool(t)
	xz := filepath.Join(kerneltest.SharedCorpus(t), "nobtf", "x86_64", "vmlinux-6.1.176.xz")
	if _, err := os.Stat(xz); err != nil {
		t.Skip(err)
	}
	vmlinux := filepath.Join(t.TempDir(), "vmlinux")
	out, err := os.Create(vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("xz", "-dc", xz)
	cmd.Stdout = out
	if err := cmd.Run(); err != nil {
		t.Skipf("xz -dc %s: %v", xz, err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	job := Job{ELF: vmlinux, Kernel: ParseKernelRelease("6.1.176")}
	if _, err := p.Encode(context.Background(), job); err != nil {
		t.Fatalf("Encode under its limits: %v", err)
	}
	for _, tt := range []struct {
		lim  limits
		want error
		says string
	}{
		{limits{time: time.Minute, memory: 64 << 20, data: 4 << 30, memoryWhy: "the test's"}, ErrMemoryLimit, "of 64 MiB"},
		{limits{time: 300 * time.Millisecond, memory: 4 << 30, data: 8 << 30, timeWhy: "the test's"}, ErrTimeLimit, "killed after 300ms"},
	} {
		_, err := p.encode(context.Background(), job, 1, tt.lim)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), vmlinux) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Encode under %+v: %v, want %v naming %s and saying %q", tt.lim, err, tt.want, vmlinux, tt.says)
		}
		t.Log(err)
	}
}

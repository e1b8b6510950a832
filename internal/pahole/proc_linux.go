package pahole

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// run runs cmd (pahole on file) under lim and waits for it to exit.
//
// pahole leads a process group of its own, so a kill reaches whatever it
// started, and dies with btfembed (Pdeathsig). Right after it starts,
// prlimit(2) sets its RLIMIT_DATA: os/exec has no hook between fork and
// exec, and Start returns just after the exec; what pahole mapped in
// between counts against the limit too, which bounds the total, and the
// children it starts inherit it. A run whose limit cannot be set is
// killed. Then a watcher samples its memory every sampleEvery and kills
// the group over a limit, when the time is up, or when ctx is done.
//
// The watcher learns of the exit with waitid(WNOWAIT), which leaves pahole
// a zombie: its process ID, and so its group's, cannot be reused before
// cmd.Wait reaps it, so the group is never killed by a number that by then
// names another process. Once pahole has exited the group is killed again,
// for children it left behind holding its output.
func run(ctx context.Context, cmd *exec.Cmd, file string, lim limits) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Only a child that left the group can keep the output pipe open now.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }
	if err := limitData(pid, lim.data); err != nil {
		killGroup()
		_ = cmd.Wait()
		return fmt.Errorf("limiting pahole's data memory: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		awaitExit(pid)
		close(exited)
	}()
	timer := time.NewTimer(lim.time)
	defer timer.Stop()
	ticker := time.NewTicker(sampleEvery)
	defer ticker.Stop()
	var killed error
	var peakData int64
watch:
	for {
		select {
		case <-exited:
			break watch
		case <-ctx.Done():
			killed = ctx.Err()
			break watch
		case <-timer.C:
			killed = lim.timeError(file)
			break watch
		case <-ticker.C:
			resident, data := memoryOf(pid)
			peakData = max(peakData, data)
			if resident > lim.memory {
				killed = lim.memoryError(file, resident)
				break watch
			}
		}
	}
	killGroup()
	<-exited
	err := cmd.Wait()
	if killed != nil {
		return killed
	}
	if err != nil && peakData >= lim.data/4*3 {
		// The kernel refused an allocation, most likely; pahole's own
		// message for it varies ("memory exhausted", "Error emitting
		// BTF type").
		return fmt.Errorf("%w (its data memory reached %d MiB of its %d MiB RLIMIT_DATA)", err, peakData>>20, lim.data>>20)
	}
	return err
}

// limitData sets RLIMIT_DATA of process pid to n bytes, or keeps the
// lower limit it inherited.
func limitData(pid int, n int64) error {
	var own unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_DATA, &own); err != nil {
		return err
	}
	l := min(uint64(n), own.Max)
	return unix.Prlimit(pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: min(l, own.Cur), Max: l}, nil)
}

// awaitExit returns when process pid has exited, without reaping it.
func awaitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// memoryOf reads the resident memory (VmRSS plus VmSwap) and data memory
// (VmData, what RLIMIT_DATA bounds) of process pid, in bytes, from
// /proc/<pid>/status; both are 0 once it has exited.
func memoryOf(pid int) (resident, data int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(b)) {
		key, value, _ := strings.Cut(line, ":")
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "VmRSS", "VmSwap":
			resident += kb << 10
		case "VmData":
			data = kb << 10
		}
	}
	return resident, data
}

// threadStack is the stack glibc gives each of pahole's threads: the
// RLIMIT_STACK pahole inherits, or at most 32 MiB where it is unlimited.
func threadStack() int64 {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &l); err != nil || l.Cur == unix.RLIM_INFINITY {
		return 32 << 20
	}
	return int64(l.Cur)
}

//go:build !linux

package pahole

import (
	"context"
	"os/exec"
	"time"
)

// run runs cmd (pahole on file) and waits for it to exit, killing it when
// ctx is done or lim.time is up. Only Linux bounds its memory (prlimit(2)
// and /proc) and kills what it started with it.
func run(ctx context.Context, cmd *exec.Cmd, file string, lim limits) error {
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(lim.time)
	defer timer.Stop()
	select {
	case err := <-exited:
		return err
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-exited
		return ctx.Err()
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-exited
		return lim.timeError(file)
	}
}

// threadStack is the stack size glibc's threads get by default.
func threadStack() int64 { return 8 << 20 }

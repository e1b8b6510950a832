package pahole

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill pahole when btfembed dies (a signal
// handler's exit, SIGKILL), so no run outlives the temporary files it
// reads and writes.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

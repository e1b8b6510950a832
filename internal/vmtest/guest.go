package vmtest

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Guest is the /init side of a boot: it sets up the guest's file systems
// and console, reports records, and powers the machine off.
type Guest struct {
	console *os.File
	// Cmdline holds the kernel command line's key=value words (a bare
	// word maps to "").
	Cmdline map[string]string
}

// guestMounts are what a Go /init needs from the kernel: /proc, /sys, the
// device nodes (the kernel does not mount devtmpfs over an initramfs, so
// not even /dev/console exists before this), and tracefs for tracepoints.
var guestMounts = []struct{ source, target, fstype string }{
	{"proc", "/proc", "proc"},
	{"sysfs", "/sys", "sysfs"},
	{"devtmpfs", "/dev", "devtmpfs"},
	{"tracefs", "/sys/kernel/tracing", "tracefs"},
}

// StartGuest mounts proc, sysfs, devtmpfs and tracefs, makes /dev/console
// the process's stdin, stdout and stderr, and reads the kernel command
// line. Call it first in /init.
func StartGuest() (*Guest, error) {
	for _, m := range guestMounts {
		if err := os.MkdirAll(m.target, 0o755); err != nil {
			return nil, err
		}
		if err := unix.Mount(m.source, m.target, m.fstype, 0, ""); err != nil && !errors.Is(err, unix.EBUSY) {
			return nil, fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
	}
	console, err := os.OpenFile("/dev/console", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	for fd := range 3 {
		if err := unix.Dup2(int(console.Fd()), fd); err != nil {
			return nil, fmt.Errorf("console on fd %d: %w", fd, err)
		}
	}
	cmdline, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return nil, err
	}
	g := &Guest{console: console, Cmdline: map[string]string{}}
	for _, word := range strings.Fields(string(cmdline)) {
		k, v, _ := strings.Cut(word, "=")
		g.Cmdline[k] = v
	}
	return g, nil
}

// Emit reports one record to the host.
func (g *Guest) Emit(kind string, data any) error {
	return Emit(g.console, kind, data)
}

// doneData is the KindDone record's data.
type doneData struct {
	Error string `json:"error,omitempty"`
}

// Done reports the end of the guest's work, failed if err is not nil, and
// powers the machine off. It does not return.
func (g *Guest) Done(err error) {
	var d doneData
	if err != nil {
		d.Error = err.Error()
	}
	g.Emit(KindDone, d)
	g.console.Sync()
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	// Only reached if power-off failed: returning from /init panics the
	// kernel, and panic=-1 with qemu's -no-reboot ends the machine too.
	os.Exit(1)
}

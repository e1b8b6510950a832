package vmtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// machineType is how qemu runs one architecture's kernels: TCG, since
// /dev/kvm is not usable on the machines the tests run on, and the first
// serial port as the console.
type machineType struct {
	goarch  string
	qemu    string
	args    []string
	console string
	cmdline []string // kernel command-line words every boot needs
}

// machineTypes are the machines by architecture, in the
// kernelkey.NormalizeArch spelling.
var machineTypes = map[string]machineType{
	"x86_64": {
		goarch:  "amd64",
		qemu:    "qemu-system-x86_64",
		args:    []string{"-accel", "tcg", "-cpu", "max", "-m", "512"},
		console: "ttyS0",
		// A TCG guest on a busy host can miss the timer interrupts the
		// kernel counts while it checks the IO-APIC timer at boot
		// (check_timer, under apic_intr_mode_init), and panic: one boot
		// in 13 died there with the host's load average at 14.
		// no_timer_check skips that check.
		cmdline: []string{"no_timer_check"},
	},
	// Debian's 686-pae kernels need PAE and NX, which -cpu max has.
	"i386": {
		goarch:  "386",
		qemu:    "qemu-system-i386",
		args:    []string{"-accel", "tcg", "-cpu", "max", "-m", "512"},
		console: "ttyS0",
		cmdline: []string{"no_timer_check"},
	},
	"arm64": {
		goarch:  "arm64",
		qemu:    "qemu-system-aarch64",
		args:    []string{"-M", "virt", "-accel", "tcg", "-cpu", "max", "-m", "1024"},
		console: "ttyAMA0",
	},
}

// machineFor returns the machine for arch in any spelling
// kernelkey.NormalizeArch knows, so a kernel's key, a GOARCH and uname -m
// all find it.
func machineFor(arch string) (machineType, error) {
	a, _ := kernelkey.NormalizeArch(arch)
	mt, ok := machineTypes[a]
	if !ok {
		return mt, fmt.Errorf("no qemu machine for architecture %q (have %s)", arch, strings.Join(slices.Sorted(maps.Keys(machineTypes)), ", "))
	}
	return mt, nil
}

// GOARCH is the Go architecture of binaries for a guest of arch.
func GOARCH(arch string) (string, error) {
	mt, err := machineFor(arch)
	return mt.goarch, err
}

// Available reports why arch's guests cannot be booted here: an unknown
// architecture or a missing qemu binary (Debian: qemu-system-x86,
// qemu-system-arm).
func Available(arch string) error {
	mt, err := machineFor(arch)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath(mt.qemu); err != nil {
		return fmt.Errorf("%s not found (install qemu-system-x86, which has qemu-system-i386 too, and qemu-system-arm): %w", mt.qemu, err)
	}
	return nil
}

// DefaultTimeout bounds a boot when Machine.Timeout is zero. A TCG boot of
// a distribution kernel reaches /init in about 8 s on one core.
const DefaultTimeout = 2 * time.Minute

// Machine is one boot: a kernel image, the initramfs holding /init, and
// extra kernel command-line words.
type Machine struct {
	Arch      string // "x86_64", "i386" or "arm64", in any spelling kernelkey.NormalizeArch knows
	Kernel    string // path of the kernel image
	Initramfs []File
	Cmdline   []string
	Timeout   time.Duration
}

// Boot is what one boot produced.
type Boot struct {
	// Records are the guest's records, in order, KindDone last.
	Records []Record
	// Console is everything the guest printed on the serial console.
	Console []byte
	// UntilInit is the time from qemu's start to the guest's first record:
	// kernel boot and /init start-up.
	UntilInit time.Duration
	// Total is the time until qemu exited.
	Total time.Duration
}

// Find returns the records of one kind.
func (b *Boot) Find(kind string) []Record {
	var out []Record
	for _, r := range b.Records {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// bootSlots bounds the boots running at once to one per CPU: a TCG guest
// with one vCPU keeps one host core busy.
var bootSlots = sync.OnceValue(func() chan struct{} {
	return make(chan struct{}, runtime.NumCPU())
})

// ErrIncomplete is wrapped by Run's error when the guest did not report
// KindDone: it crashed, hung past the timeout, or the kernel panicked.
var ErrIncomplete = errors.New("guest did not finish")

// Run boots m in qemu and returns the guest's records once the machine
// powers off. It waits for a free CPU first. qemu is killed when ctx ends
// or the timeout passes. The error wraps ErrIncomplete if the guest did not
// report KindDone, and carries the guest's message if Done got an error;
// the Boot is returned with whatever was collected in every case.
func Run(ctx context.Context, m *Machine) (*Boot, error) {
	mt, err := machineFor(m.Arch)
	if err != nil {
		return nil, err
	}
	initrd, err := os.CreateTemp("", "btfembed-vmtest-*.cpio")
	if err != nil {
		return nil, err
	}
	defer os.Remove(initrd.Name())
	w := bufio.NewWriter(initrd)
	err = WriteCPIO(w, m.Initramfs)
	if err == nil {
		err = w.Flush()
	}
	if cerr := initrd.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("initramfs %s: %w", initrd.Name(), err)
	}

	slots := bootSlots()
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-slots }()

	timeout := m.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmdline := append(append([]string{"console=" + mt.console, "quiet", "panic=-1"}, mt.cmdline...), m.Cmdline...)
	args := append(append([]string(nil), mt.args...),
		"-nographic", "-no-reboot",
		"-kernel", m.Kernel, "-initrd", initrd.Name(),
		"-append", strings.Join(cmdline, " "))
	cmd := exec.CommandContext(ctx, mt.qemu, args...)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", mt.qemu, err)
	}
	b := &Boot{}
	console, readErr := readConsole(stdout, start, &b.UntilInit)
	waitErr := cmd.Wait()
	b.Total = time.Since(start)
	b.Console = console
	recs, parseErr := parseRecords(console)
	b.Records = recs

	what := fmt.Sprintf("boot %s (%s)", m.Kernel, strings.Join(m.Cmdline, " "))
	switch {
	case ctx.Err() != nil:
		return b, fmt.Errorf("%s: %w: timed out after %v\n%s", what, ErrIncomplete, timeout, tail(console))
	case parseErr != nil:
		return b, fmt.Errorf("%s: %w", what, parseErr)
	case readErr != nil:
		return b, fmt.Errorf("%s: read console: %w", what, readErr)
	case len(recs) == 0 || recs[len(recs)-1].Kind != KindDone:
		return b, fmt.Errorf("%s: %w (qemu: %v %s)\n%s", what, ErrIncomplete, waitErr, bytes.TrimSpace(stderr.Bytes()), tail(console))
	}
	var done doneData
	if err := recs[len(recs)-1].Decode(&done); err != nil {
		return b, fmt.Errorf("%s: %w", what, err)
	}
	if done.Error != "" {
		return b, fmt.Errorf("%s: guest failed: %s", what, done.Error)
	}
	if waitErr != nil {
		return b, fmt.Errorf("%s: %s: %w %s", what, mt.qemu, waitErr, bytes.TrimSpace(stderr.Bytes()))
	}
	return b, nil
}

// readConsole reads the serial console to its end, noting when the first
// record arrived.
func readConsole(r io.Reader, start time.Time, first *time.Duration) ([]byte, error) {
	var out bytes.Buffer
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		out.Write(line)
		if *first == 0 && bytes.Contains(line, []byte(recordPrefix)) {
			*first = time.Since(start)
		}
		if errors.Is(err, io.EOF) {
			return out.Bytes(), nil
		}
		if err != nil {
			return out.Bytes(), err
		}
	}
}

// tail is the end of the console, for error messages.
func tail(console []byte) string {
	const n = 3000
	if len(console) > n {
		console = console[len(console)-n:]
	}
	return string(console)
}

// Command fieldinit is the /init of the field test (see package vmtest's
// field.go for its initramfs layout and records). It does what an agent
// does on a kernel, with nothing forced:
//
//  1. raise RLIMIT_MEMLOCK (see raiseMemlock); with btfembed.hide=1 on the
//     kernel command line, mount a tmpfs over /sys/kernel/btf, so the
//     kernel looks like one built without BTF;
//  2. load the kernel modules of the initramfs with finit_module;
//  3. select BTF with runtime CollectionOptions(nil) from the payload (with
//     btfembed.family=1, allowing a stable family's BTF) and report the
//     choice;
//  4. load every program of every object with it, one at a time with the
//     maps it uses (alone), and report the kernel's verdict on each;
//  5. run examples/execsnoop (the built binary, its own payload, no flags
//     but -family with btfembed.family=1), exec a program once it has
//     attached, and report the event it prints.
//
// It judges nothing: the test compares the records.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/vmtest"
	btfruntime "github.com/btfembed/btfembed/runtime"
	// The field payload embeds the modules the initramfs loads, as a
	// generated file for such a payload imports it.
	_ "github.com/btfembed/btfembed/runtime/modules"
)

func main() {
	if filepath.Base(os.Args[0]) == filepath.Base(vmtest.FieldExecChild) {
		return // the exec execsnoop must see
	}
	g, err := vmtest.StartGuest()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fieldinit:", err)
		os.Exit(2)
	}
	g.Done(run(g))
}

func run(g *vmtest.Guest) error {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return err
	}
	host := vmtest.FieldHost{
		Release: unix.ByteSliceToString(u.Release[:]),
		Machine: unix.ByteSliceToString(u.Machine[:]),
	}
	_, err := os.Lstat("/sys/kernel/btf/vmlinux")
	host.KernelBTF = err == nil
	if err := raiseMemlock(); err != nil {
		return err
	}
	if k, v, _ := strings.Cut(vmtest.FieldHideBTF, "="); g.Cmdline[k] == v {
		if err := unix.Mount("none", "/sys/kernel/btf", "tmpfs", 0, ""); err != nil {
			return fmt.Errorf("hide /sys/kernel/btf: %w", err)
		}
		host.Hidden = true
	}
	if err := g.Emit(vmtest.KindFieldHost, host); err != nil {
		return err
	}
	if err := loadModules(g); err != nil {
		return err
	}

	payload, err := os.ReadFile("/" + vmtest.FieldPayload)
	if err != nil {
		return err
	}
	assets, err := btfruntime.Open(payload)
	if err != nil {
		return err
	}
	k, v, _ := strings.Cut(vmtest.FieldAllowFamily, "=")
	family := g.Cmdline[k] == v
	opts, sel, err := assets.CollectionOptions(&btfruntime.SelectOptions{AllowFamily: family})
	rec := vmtest.FieldSelect{}
	if err != nil {
		rec.Error = err.Error()
	} else {
		rec.Source, rec.Key = sel.Source.String(), sel.Key.String()
		rec.Release, rec.Distro, rec.Version = sel.Key.Release, sel.Key.Distro, sel.Key.Version
		if sel.Family != nil {
			rec.Family = sel.Family.Reason
		}
		for name := range sel.Modules {
			rec.Modules = append(rec.Modules, name)
		}
		slices.Sort(rec.Modules)
	}
	if err := g.Emit(vmtest.KindFieldSelect, rec); err != nil {
		return err
	}
	if opts == nil {
		// Nothing can be loaded; the test reports the selection error.
		return nil
	}
	if err := loadObjects(g, opts); err != nil {
		return err
	}
	return g.Emit(vmtest.KindFieldExecsnoop, execsnoop(family))
}

// raiseMemlock lifts RLIMIT_MEMLOCK for this process and the execsnoop it
// starts, which inherits the limit. Before 5.11 the kernel charges BPF
// maps and programs to it (memcg accounting replaced that in 5.11), and
// init's default there, 64 KiB, makes loads fail with "operation not
// permitted (MEMLOCK may be too low)" on Debian 11's 5.10.
//
// It calls setrlimit itself rather than cilium/ebpf's rlimit package:
// that package creates a map in its init, which in /init runs before
// StartGuest has mounted /proc, and cilium/ebpf keeps the failed feature
// probe that call makes (it reads /proc/self/mountinfo) for the life of
// the process, so every later load fails with "open /proc/self/mountinfo:
// no such file or directory". An agent that is not /init can call
// rlimit.RemoveMemlock as usual.
func raiseMemlock() error {
	inf := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &inf); err != nil {
		return fmt.Errorf("raise RLIMIT_MEMLOCK: %w", err)
	}
	return nil
}

// loadModules loads the initramfs's modules in name order (the test names
// them NN-<module>.ko, dependencies first).
func loadModules(g *vmtest.Guest) error {
	paths, err := filepath.Glob(filepath.Join("/", vmtest.FieldModules, "*.ko"))
	if err != nil {
		return err
	}
	slices.Sort(paths)
	for _, p := range paths {
		rec := vmtest.FieldModule{Name: strings.TrimSuffix(filepath.Base(p), ".ko")}
		if err := finitModule(p); err != nil {
			rec.Error = err.Error()
		}
		if err := g.Emit(vmtest.KindFieldModule, rec); err != nil {
			return err
		}
	}
	return nil
}

func finitModule(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.FinitModule(int(f.Fd()), "", 0); err != nil {
		return fmt.Errorf("finit_module %s: %w", path, err)
	}
	return nil
}

// loadObjects loads each program of each object on its own (with the maps
// of its object), so that one program's failure says nothing about
// another's, and reports every verdict.
func loadObjects(g *vmtest.Guest, opts *ebpf.CollectionOptions) error {
	paths, err := filepath.Glob(filepath.Join("/", vmtest.FieldObjects, "*.o"))
	if err != nil {
		return err
	}
	slices.Sort(paths)
	for _, p := range paths {
		spec, err := ebpf.LoadCollectionSpec(p)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(spec.Programs))
		for name := range spec.Programs {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			ps := spec.Programs[name]
			v := vmtest.ProgramLoad{
				Object:  filepath.Base(p),
				Program: name,
				Section: ps.SectionName,
				Type:    ps.Type.String(),
				Attach:  ps.AttachType.String(),
			}
			one := alone(spec, name)
			coll, err := ebpf.NewCollectionWithOptions(one, *opts)
			if err != nil {
				v.Error = verdictError(err)
				v.Log = verifierTail(err)
			} else {
				v.Loaded = true
				coll.Close()
			}
			if err := g.Emit(vmtest.KindProgramLoad, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// alone is spec with program name alone and the maps it uses: those it
// references, the inner maps of maps of maps, and the maps holding global
// variables (as runtime's Prune keeps them). cilium/ebpf creates every
// map of a collection before it loads a program, so a map of a type the
// kernel lacks, used by another program of the object, would fail this
// one too, while the prediction is the program's own.
func alone(spec *ebpf.CollectionSpec, name string) *ebpf.CollectionSpec {
	one := spec.Copy()
	for other := range one.Programs {
		if other != name {
			delete(one.Programs, other)
		}
	}
	used := map[string]bool{}
	for _, ins := range one.Programs[name].Instructions {
		if ref := ins.Reference(); ref != "" && ins.OpCode.IsDWordLoad() {
			used[ref] = true
		}
	}
	for _, m := range one.Maps {
		for _, kv := range m.Contents {
			if inner, ok := kv.Value.(string); ok {
				used[inner] = true
			}
		}
	}
	for _, v := range one.Variables {
		used[v.SectionName] = true
	}
	for m := range one.Maps {
		if !used[m] {
			delete(one.Maps, m)
		}
	}
	return one
}

// verdictError keeps a load error short: cilium/ebpf's message names the
// program and the verifier's last lines.
func verdictError(err error) string {
	const max = 600
	s := err.Error()
	if len(s) > max {
		s = "..." + s[len(s)-max:]
	}
	return s
}

// verifierTail is the end of the verifier's log in err, if the verifier
// rejected the program: the rejected instruction, the reason and the
// statistics lines the verifier ends with.
func verifierTail(err error) []string {
	const lines = 6
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		return nil
	}
	return ve.Log[max(len(ve.Log)-lines, 0):]
}

// execsnoopTimeout bounds each wait on execsnoop; a TCG guest is slow to
// start a 10 MB Go binary and load a program.
const execsnoopTimeout = 60 * time.Second

// execsnoop runs examples/execsnoop as users do (no flags: it picks BTF
// itself; -family where the family is allowed), waits until it has
// attached, execs FieldExecChild and returns the event execsnoop printed
// for it.
func execsnoop(family bool) vmtest.FieldExecsnoop {
	var rec vmtest.FieldExecsnoop
	fail := func(err error) vmtest.FieldExecsnoop {
		rec.Error = err.Error()
		return rec
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*execsnoopTimeout)
	defer cancel()
	var args []string
	if family {
		args = append(args, "-family")
	}
	cmd := exec.CommandContext(ctx, "/"+vmtest.FieldExecsnoopBin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	defer func() {
		cmd.Process.Signal(unix.SIGTERM)
		cmd.Wait()
	}()

	// execsnoop prints its banner on stderr once attached, or its error.
	banner := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stderr)
		var all []string
		for s.Scan() {
			all = append(all, s.Text())
			if strings.Contains(s.Text(), "tracing exec") {
				banner <- s.Text()
			}
		}
		banner <- strings.Join(all, "; ")
	}()
	select {
	case rec.Banner = <-banner:
	case <-time.After(execsnoopTimeout):
		return fail(errors.New("execsnoop did not attach in time"))
	}
	if !strings.Contains(rec.Banner, "tracing exec") {
		return fail(fmt.Errorf("execsnoop failed: %s", rec.Banner))
	}

	child := exec.Command("/" + vmtest.FieldExecChild)
	if err := child.Run(); err != nil {
		return fail(fmt.Errorf("run %s: %w", child.Path, err))
	}
	rec.WantPid, rec.WantPpid = child.Process.Pid, os.Getpid()

	// Lines: PID PPID COMM FILENAME, after a header.
	lines := make(chan []string)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if f := strings.Fields(s.Text()); len(f) == 4 && f[3] == "/"+vmtest.FieldExecChild {
				lines <- f
				return
			}
		}
		close(lines)
	}()
	select {
	case f, ok := <-lines:
		if !ok {
			return fail(errors.New("execsnoop ended without an event for " + vmtest.FieldExecChild))
		}
		rec.Pid, _ = strconv.Atoi(f[0])
		rec.Ppid, _ = strconv.Atoi(f[1])
		rec.Comm, rec.Filename = f[2], f[3]
	case <-time.After(execsnoopTimeout):
		return fail(errors.New("no execsnoop event for " + vmtest.FieldExecChild))
	}
	return rec
}

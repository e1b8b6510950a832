// Command execsnoop prints every program executed on the machine (pid,
// parent pid, comm, file name), from a CO-RE BPF program that reads
// task_struct with BPF_CORE_READ.
//
// It is btfembed's worked example, laid out as a bpf2go user's package: the
// first go:generate line compiles bpf/execsnoop.c for amd64 and arm64
// (bpf_x86_bpfel.o, bpf_arm64_bpfel.o and their Go loaders, committed, so
// building needs no clang), the second embeds, for every kernel of the
// corpus, the minimal BTF that the object of the kernel's architecture
// needs: kernelbtf_amd64.go holds x86_64 kernels only, kernelbtf_arm64.go
// arm64 ones. main hands cilium/ebpf the right BTF at start-up. On a
// kernel with /sys/kernel/btf/vmlinux the kernel's own BTF is used unless
// -embedded is given; on one without, the embedded BTF for its release, or,
// with -family, for a newer patch release of a family the payload records
// as stable, a member's.
//
// Regenerate the payloads alone, without clang:
//
//	go generate -run btfembed ./examples/execsnoop
//
// Run it as root:
//
//	go run ./examples/execsnoop -embedded -n 5
//
// The payloads hold the testdata kernels only, so -embedded on any other
// kernel says "kernel not supported" with the import command for it. To
// embed the kernel you are on as well (this changes the committed files;
// git checkout examples/execsnoop restores them):
//
//	go run ./cmd/btfembed corpus import -o /tmp/mycorpus /sys/kernel/btf/vmlinux
//	cd examples/execsnoop && go run ../../cmd/btfembed -corpus ../../testdata/btfhub -corpus /tmp/mycorpus
//
// It also shows what an agent does with btfembed's load predictions:
// count_exec, an optional program that counts execs per cgroup, needs
// Linux 6.2; on older kernels the runtime says it will not load and why,
// and execsnoop skips it (Selection.LoadAndAssign), logs the reason and
// traces exec all the same. It raises RLIMIT_MEMLOCK first, as agents on
// kernels before 5.11 must (docs/runtime.md).
package main

//go:generate go tool bpf2go -target amd64,arm64 -type event bpf bpf/execsnoop.c -- -Wall -Werror
//go:generate go tool btfembed -corpus ../../testdata/btfhub

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cilium/ebpf/rlimit"

	btfruntime "github.com/btfembed/btfembed/runtime"
)

func main() {
	embedded := flag.Bool("embedded", false, "use the embedded BTF even where the kernel has its own")
	count := flag.Int("n", 0, "exit after this many events (0: until interrupted)")
	hostRoot := flag.String("host-root", "", "where the host's / is mounted, when running in a container")
	family := flag.Bool("family", false, "on a kernel whose release is not embedded, use the BTF of its family where the payload records the family as stable (a newer patch release)")
	flag.Parse()

	// Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK, whose
	// default is too low for most agents. (A process that is itself a
	// system's /init must not import rlimit: see docs/runtime.md.)
	if err := rlimit.RemoveMemlock(); err != nil {
		fmt.Fprintln(os.Stderr, "execsnoop: raise RLIMIT_MEMLOCK:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := &btfruntime.SelectOptions{ForceEmbedded: *embedded, HostRoot: *hostRoot, AllowFamily: *family}
	if err := run(ctx, os.Stdout, os.Stderr, opts, *count); err != nil {
		fmt.Fprintln(os.Stderr, "execsnoop:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, stdout, stderr io.Writer, opts *btfruntime.SelectOptions, count int) error {
	assets, err := KernelBTF()
	if err != nil {
		return err
	}
	t, err := newTracer(assets, opts)
	if err != nil {
		return err
	}
	defer t.Close()
	optional := "counting execs per cgroup"
	if t.Skipped != "" {
		optional = "skipped " + t.Skipped
	}
	source := fmt.Sprintf("%s (%s)", t.Selection.Source, t.Selection.Key)
	if f := t.Selection.Family; f != nil {
		source += ": " + f.Reason // what is assumed, in the log
	}
	fmt.Fprintf(stderr, "execsnoop: BTF from %s; %s; tracing exec, Ctrl-C to stop\n", source, optional)
	go func() {
		<-ctx.Done()
		t.Close() // unblocks Next
	}()

	fmt.Fprintf(stdout, "%-8s %-8s %-16s %s\n", "PID", "PPID", "COMM", "FILENAME")
	for n := 0; count == 0 || n < count; n++ {
		ev, err := t.Next()
		if errors.Is(err, errClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-8d %-8d %-16s %s\n", ev.Pid, ev.Ppid, ev.CommString(), ev.FilenameString())
	}
	return nil
}

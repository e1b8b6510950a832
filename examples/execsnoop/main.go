// Command execsnoop prints every program executed on the machine (pid,
// parent pid, comm, file name), from a CO-RE BPF program that reads
// task_struct with BPF_CORE_READ.
//
// It is btfembed's worked example: the go:generate line below embeds, for
// every kernel of the corpus, the minimal BTF that bpf/execsnoop_bpfel.o
// needs, and main hands cilium/ebpf the right one at start-up. On a kernel
// with /sys/kernel/btf/vmlinux the kernel's own BTF is used unless
// -embedded is given; on one without, the embedded BTF for its release.
//
// Run it as root:
//
//	go run ./examples/execsnoop -embedded -n 5
package main

//go:generate go tool btfembed -corpus ../../testdata/btfhub -output kernelbtf.go bpf/execsnoop_bpfel.o

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	btfruntime "github.com/btfembed/btfembed/runtime"
)

func main() {
	embedded := flag.Bool("embedded", false, "use the embedded BTF even where the kernel has its own")
	count := flag.Int("n", 0, "exit after this many events (0: until interrupted)")
	hostRoot := flag.String("host-root", "", "where the host's / is mounted, when running in a container")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := &btfruntime.SelectOptions{ForceEmbedded: *embedded, HostRoot: *hostRoot}
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
	fmt.Fprintf(stderr, "execsnoop: BTF from %s (%s); tracing exec, Ctrl-C to stop\n", t.Selection.Source, t.Selection.Key)
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

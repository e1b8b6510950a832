// Command btfembed embeds minimized kernel BTF in Go programs that load
// CO-RE eBPF objects with github.com/cilium/ebpf, so they run on kernels
// that do not expose BTF themselves.
//
// Run from go:generate, next to the objects bpf2go produced:
//
//	//go:generate go tool btfembed -corpus ./btfhub-archive bpf_bpfel.o
//
// Without a subcommand btfembed generates: for every kernel of the corpus
// it computes the minimal BTF the objects' CO-RE relocations need, checks
// it against cilium/ebpf's own relocation of the full BTF, and writes Go
// source that embeds the result with a runtime selector. The subcommands
// are the steps on their own:
//
//	btfembed min [-B base] <kernel-btf> <out.btf> <obj>...   like bpftool gen min_core_btf
//	btfembed distill -B <base> <module> <out.base.btf> <out.split.btf>
//	btfembed relocate -B <new-base> <distilled.base.btf> <split.btf> <out.btf>
//	btfembed corpus import -o <dir> <input>...                 kernel packages, images, BTF
//	btfembed corpus ls <dir>
//	btfembed inspect [-B base] <payload or BTF file>...
//
// Run "btfembed <subcommand> -h" for the flags of each.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/btfembed/btfembed/internal/atomicfile"
)

func main() {
	cleanupOnSignal()
	if err := run(os.Stdout, os.Stderr, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "btfembed:", err)
		}
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// errUsage marks errors in the command line, which exit with status 2.
var errUsage = errors.New("usage")

type subcommand func(stdout, stderr io.Writer, args []string) error

// subcommands maps each subcommand name to the function that runs it with
// the arguments that follow the name.
var subcommands = map[string]subcommand{
	"corpus":   runCorpus,
	"distill":  runDistill,
	"inspect":  runInspect,
	"min":      runMin,
	"relocate": runRelocate,
}

func run(stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 {
		if sub, ok := subcommands[args[0]]; ok {
			err := sub(stdout, stderr, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	return runGenerate(stdout, stderr, args)
}

// cleanupOnSignal makes SIGINT and SIGTERM remove the temporary files of
// outputs not yet committed (after a commit in progress ends, so outputs
// are all old or all new) before the process exits as the signal asks.
func cleanupOnSignal() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		atomicfile.RemoveTemps()
		fmt.Fprintf(os.Stderr, "btfembed: %v: temporary files removed, outputs unchanged\n", sig)
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
}

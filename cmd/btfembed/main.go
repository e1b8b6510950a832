// Command btfembed embeds minimized kernel BTF in Go programs that load
// CO-RE eBPF objects with github.com/cilium/ebpf, so they run on kernels
// that do not expose BTF themselves.
//
// Run from go:generate, after bpf2go:
//
//	//go:generate go tool bpf2go -target amd64,arm64 bpf bpf/agent.c
//	//go:generate go tool btfembed -corpus ./btfhub-archive
//
// Without a subcommand btfembed generates: it finds the BPF objects the
// package embeds for each GOARCH (or takes the objects named), computes
// for every kernel of the corpus the minimal BTF that the CO-RE
// relocations of the objects of the kernel's architecture need, checks it
// against cilium/ebpf's own relocation of the full BTF, and writes Go
// source per GOARCH that embeds the result with a runtime selector. The
// subcommands are the steps on their own:
//
//	btfembed min [-B base] <kernel-btf> <out.btf> <obj>...   like bpftool gen min_core_btf
//	btfembed distill -B <base> <module> <out.base.btf> <out.split.btf>
//	btfembed relocate -B <new-base> <distilled.base.btf> <split.btf> <out.btf>
//	btfembed corpus import -o <dir> <input>...                 kernel packages, images, BTF
//	btfembed corpus ls <dir>
//	btfembed inspect [-B base] <payload or BTF file>...
//	btfembed merge [-pkg P] [-output F.go] <part>...            join -shard i/n runs
//	btfembed cache info|clean                                  $BTFEMBED_CACHE
//
// "btfembed -h" lists the flags and subcommands, "btfembed help <subcommand>"
// shows one's arguments. Errors in the command line exit with status 2,
// other failures with 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/btfembed/btfembed/internal/atomicfile"
)

func main() {
	cleanupOnSignal()
	if err := run(os.Stdout, os.Stderr, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "btfembed:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// errUsage marks errors in the command line, which exit with status 2.
// Match it with errors.Is; usagef makes such errors without adding to
// their message.
var errUsage = errors.New("usage")

type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Unwrap() error        { return e.err }
func (e usageError) Is(target error) bool { return target == errUsage }

// usagef is fmt.Errorf for an error in the command line.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// newFlagSet makes a subcommand's flag set: it returns errors rather than
// exiting, so that parseFlags can make them usage errors, and its usage is
// help followed by the flags, written to stderr (stdout for "btfembed
// help <subcommand>").
func newFlagSet(name, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), help)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses a subcommand's args, turning flag errors into usage
// errors (exit status 2) that start with the flag set's name; -h gives
// flag.ErrHelp, which run turns into success.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %w", fs.Name(), err)
	}
	return nil
}

// parseInterspersed is fs.Parse that also takes flags after positional
// arguments (btfembed bpf_arm64_bpfel.o -arch arm64), as bpf2go users
// type them; the flag package alone stops at the first positional one.
// "--" still ends the flags. Afterwards fs.Args() holds the positional
// arguments in order.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Parsing "--" alone sets fs.Args() to the positional arguments and
	// leaves the flags' values as they are.
	return fs.Parse(append([]string{"--"}, positional...))
}

type subcommand struct {
	run     func(stdout, stderr io.Writer, args []string) error
	summary string // one line for the command list
}

// helpSummary is the help subcommand's line in the list; run dispatches
// it itself, since its text lists the others.
const helpSummary = "show the help of btfembed or of a subcommand"

// subcommands maps each subcommand name to the function that runs it with
// the arguments that follow the name.
var subcommands = map[string]subcommand{
	"cache":    {runCache, "show the cache's directory and size (info), or empty it (clean)"},
	"corpus":   {runCorpus, "build a kernel BTF corpus from packages and images (import), or list one (ls)"},
	"distill":  {runDistill, "split module BTF into a distilled base and new split BTF, like libbpf's btf__distill_base"},
	"inspect":  {runInspect, "describe payloads (kernels, types, modules) and BTF files (types by kind)"},
	"merge":    {runMerge, "join the parts that -shard i/n runs wrote into the output of one run"},
	"min":      {runMin, "one kernel's minimal BTF for some objects, like bpftool gen min_core_btf"},
	"relocate": {runRelocate, "relocate split BTF onto a new base through its distilled base, like btf__relocate"},
}

func run(stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "help":
			return runHelp(stdout, stderr, args[1:])
		case "version", "-version", "--version":
			if len(args) > 1 {
				return usagef("version takes no arguments, got %q", args[1:])
			}
			fmt.Fprintln(stdout, versionLine())
			return nil
		}
		if sub, ok := subcommands[args[0]]; ok {
			err := sub.run(stdout, stderr, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if isHelpFlag(args[0]) {
			return runHelp(stdout, stderr, nil)
		}
		if err := checkCommand(args[0]); err != nil {
			return err
		}
	}
	err := runGenerate(stdout, stderr, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

// runHelp is "btfembed help [subcommand]": the help goes to stdout.
func runHelp(stdout, _ io.Writer, args []string) error {
	switch {
	case len(args) == 0:
		return writeGenerateHelp(stdout)
	case len(args) > 1:
		return usagef("help: want at most one subcommand, got %q", args)
	case args[0] == "help":
		fmt.Fprintln(stdout, "Usage: btfembed help [subcommand]\n\n"+helpSummary+".")
		return nil
	}
	sub, ok := subcommands[args[0]]
	if !ok {
		return usagef("help: unknown subcommand %q; the subcommands are %s, help", args[0], strings.Join(slices.Sorted(maps.Keys(subcommands)), ", "))
	}
	err := sub.run(stdout, stdout, []string{"-h"})
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// checkCommand tells a mistyped subcommand ("inpsect") from the objects
// that the generate mode takes as its first argument: a word that names no
// file and could not be a path or a glob is an unknown command.
func checkCommand(first string) error {
	if strings.HasPrefix(first, "-") || strings.ContainsAny(first, "./*?[\\") {
		return nil
	}
	if _, err := os.Lstat(first); err == nil {
		return nil
	}
	names := append(slices.Sorted(maps.Keys(subcommands)), "help", "version")
	slices.Sort(names)
	return usagef("unknown command %q (and no file of that name); the commands are %s (btfembed -h explains them)", first, strings.Join(names, ", "))
}

// subcommandList is the list of subcommands for the help text, one line
// each.
func subcommandList() string {
	summaries := map[string]string{"help": helpSummary, "version": versionSummary}
	for name, sub := range subcommands {
		summaries[name] = sub.summary
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(summaries)) {
		fmt.Fprintf(&b, "  %-9s %s\n", name, summaries[name])
	}
	return b.String()
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

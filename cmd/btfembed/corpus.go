package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/pathelem"
	"github.com/btfembed/btfembed/internal/plural"
	"github.com/btfembed/btfembed/internal/safetext"
)

const corpusHelp = `Usage:
  btfembed corpus import -o <dir> [flags] <input>...
  btfembed corpus ls [flags] <dir>...

import writes kernel BTF into a corpus at <dir>, in the BTFHub-archive layout
<distro>/<version>/<arch>/<release>.btf.tar.xz, with module BTF in
<release>.modules/ beside it. An input is a kernel package (.deb, or .rpm:
give kernel-core and its kernel-modules* together, they are read as one), a
kernel image (vmlinuz, Image, Image.gz), an ELF vmlinux, raw or compressed
BTF (.btf, .btf.xz, .btf.zst, .btf.gz), a .btf.tar.xz,
/sys/kernel/btf/vmlinux, or a corpus directory. Kernels without BTF are read
from their DWARF: a vmlinux with debug info (plain or compressed) or a debug
package (linux-image-<release>-dbg_*.deb, kernel-debuginfo-*.rpm), made
into BTF by pahole (package pahole);
the result is cached under $BTFEMBED_CACHE by the input's contents
(-cache-verify, or $BTFEMBED_CACHE_VERIFY=1, runs pahole anyway and checks
the entry against it). Release,
arch and distribution come from the input (package metadata, the kernel's
version string, the ELF machine, the path) unless flags give them. Bad
inputs are reported and skipped.

ls prints one line per kernel (key, types, bytes, modules) and a total.

See docs/corpus.md for the layout.
`

// runCorpus runs "btfembed corpus"; args are the arguments after "corpus".
func runCorpus(stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, corpusHelp)
		return usagef("corpus: missing subcommand import or ls")
	}
	switch args[0] {
	case "import":
		return runCorpusImport(stdout, stderr, args[1:])
	case "ls", "list":
		return runCorpusList(stdout, stderr, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, corpusHelp)
		return flag.ErrHelp
	}
	fmt.Fprint(stderr, corpusHelp)
	return usagef("corpus: unknown subcommand %q", args[0])
}

func newCorpusFlags(name string, stderr io.Writer) *flag.FlagSet {
	return newFlagSet("btfembed corpus "+name, corpusHelp+"\nflags of "+name+":\n", stderr)
}

func runCorpusImport(stdout, stderr io.Writer, args []string) error {
	fs := newCorpusFlags("import", stderr)
	out := fs.String("o", "", "corpus `dir`ectory to write (required)")
	var opts corpus.ImportOptions
	fs.StringVar(&opts.Key.Arch, "arch", "", "architecture of every input (x86_64, arm64, ...; amd64 and aarch64 are accepted)")
	fs.StringVar(&opts.Key.Release, "release", "", "kernel release of every input, as uname -r prints it")
	fs.StringVar(&opts.Key.Distro, "distro", "", "distribution ID of every input, as in /etc/os-release (debian, ubuntu, ...)")
	fs.StringVar(&opts.Key.Version, "version", "", "distribution VERSION_ID of every input (12, 22.04, ...)")
	fs.BoolVar(&opts.Strict, "strict", false, "stop at the first bad input instead of skipping it")
	fs.BoolVar(&opts.NoModules, "no-modules", false, "leave module BTF out")
	fs.IntVar(&opts.Workers, "workers", 0, "inputs read at once; fewer than GOMAXPROCS also lowers GOMAXPROCS to it (default: all cores)")
	fs.BoolVar(&opts.CacheVerify, "cache-verify", cache.VerifyFromEnv(), "verify mode, for a cache restored from a less trusted source: run pahole again on every DWARF input the cache holds and use its result, warning when the entry differs (default $"+cache.VerifyEnvVar+"=1); see docs/cache.md")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("corpus import: -o <dir> is required")
	}
	if fs.NArg() == 0 {
		return usagef("corpus import: no inputs")
	}
	if opts.Key.Arch != "" {
		arch, ok := kernelkey.NormalizeArch(opts.Key.Arch)
		if !ok {
			return usagef("corpus import: unknown architecture %q", opts.Key.Arch)
		}
		opts.Key.Arch = arch
	}
	// The key flags name the corpus path of every input: one that cannot
	// be a path element (a 3,000-byte release) would fail every input.
	for _, f := range []struct{ flag, s string }{
		{"-release", opts.Key.Release}, {"-distro", opts.Key.Distro}, {"-version", opts.Key.Version},
	} {
		if f.s == "" {
			continue
		}
		if err := pathelem.Validate(f.s); err != nil {
			return usagef("corpus import: %s %s", f.flag, safetext.Escape(err.Error()))
		}
	}
	opts.Warn = func(err error) { fmt.Fprintln(stderr, "btfembed corpus import: warning:", err) }
	cacheDir, err := cache.DirFromEnv()
	if err != nil { // the cache is an optimization
		opts.Warn(fmt.Errorf("%w; running without the cache", err))
	}
	opts.CacheDir = cacheDir
	opts.Progress = newImportProgress(stderr, 30*time.Second).report
	defer limitProcs(opts.Workers)()
	setImportMemoryLimit()
	res, err := corpus.Import(context.Background(), *out, fs.Args(), &opts)
	if res != nil {
		for _, e := range res.Skipped {
			fmt.Fprintln(stderr, "btfembed corpus import: skipped:", safetext.Escape(fmt.Sprint(e)))
		}
		if opts.Key.Distro == "" && opts.Key.Version == "" {
			printGuesses(stderr, res.Kernels)
		}
		tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
		modules := 0
		for _, k := range res.Kernels {
			fmt.Fprintf(tw, "%s\t%d bytes\t%d modules\t%s\n", k.Key, k.Bytes, k.Modules, k.File)
			modules += k.Modules
		}
		tw.Flush()
		fmt.Fprintf(stdout, "imported %s with %s; skipped %d\n", plural.Count(len(res.Kernels), "kernel"), plural.Count(modules, "module"), len(res.Skipped))
	}
	if err != nil {
		return fmt.Errorf("corpus import: %w", err)
	}
	if len(res.Kernels) == 0 {
		return errors.New("corpus import: no kernel imported")
	}
	return nil
}

// printGuesses says under which distribution and version each input's
// kernels were put, and what told them: a guess (a directory taken for
// the BTFHub layout, a banner read wrong) is then seen, not found later in
// the corpus. The kernels of one input that share a guess, as those of a
// corpus directory do, make one line.
func printGuesses(w io.Writer, kernels []corpus.Imported) {
	type guess struct{ input, distro, from string }
	count := map[guess]int{}
	var order []guess
	for _, k := range kernels {
		g := guess{k.Input, distroVersion(k.Key), k.KeyFrom}
		if count[g] == 0 {
			order = append(order, g)
		}
		count[g]++
	}
	for _, g := range order {
		s := "guessed " + g.distro + " from " + g.from
		if g.from == "" {
			s = "no distribution or version: nothing told them (give -distro and -version)"
		}
		if n := count[g]; n > 1 {
			s = plural.Count(n, "kernel") + ": " + s
		}
		fmt.Fprintf(w, "btfembed corpus import: %s: %s\n", safetext.Escape(g.input), safetext.Escape(s))
	}
}

// distroVersion names a key's distribution and version ("debian 11").
func distroVersion(k kernelkey.Key) string {
	d, v := cmp.Or(k.Distro, "unknown distribution"), k.Version
	if v == "" {
		v = "(version unknown)"
	}
	return d + " " + v
}

func runCorpusList(stdout, stderr io.Writer, args []string) error {
	fs := newCorpusFlags("ls", stderr)
	var opts corpus.Options
	arch := fs.String("arch", "", "list only these architectures (comma-separated)")
	fs.StringVar(&opts.Release, "release", "", "list only releases matching this `glob` (6.1.*)")
	fs.StringVar(&opts.Distro, "distro", "", "list only this distribution")
	fs.BoolVar(&opts.Strict, "strict", false, "stop at the first bad kernel")
	fs.IntVar(&opts.Workers, "workers", 0, "kernels read at once; fewer than GOMAXPROCS also lowers GOMAXPROCS to it (default: all cores)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("corpus ls: no corpus directory")
	}
	if *arch != "" {
		opts.Arch = strings.Split(*arch, ",")
	}
	for _, a := range opts.Arch {
		if _, ok := kernelkey.NormalizeArch(a); !ok {
			return fmt.Errorf("corpus ls: unknown architecture %q: %w", a, errUsage)
		}
	}
	if _, err := path.Match(opts.Release, ""); err != nil {
		return fmt.Errorf("corpus ls: -release %q: %w: %w", opts.Release, err, errUsage)
	}
	// A corpus that is not there is an error before any output.
	for _, dir := range fs.Args() {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("corpus ls: %w", err)
		}
	}
	// The table is buffered until the end, so that a listing that read no
	// kernel prints only its errors.
	tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "KERNEL\tTYPES\tBYTES\tMODULES\tMODULE BYTES")
	var total corpus.Summary
	kernels, skipped := 0, 0
	var firstErr error
	defer limitProcs(opts.Workers)()
	err := corpus.List(context.Background(), fs.Args(), &opts, func(s corpus.Summary, err error) error {
		if err != nil {
			skipped++
			fmt.Fprintln(stderr, "btfembed corpus ls: skipped:", safetext.Escape(err.Error()))
			if opts.Strict {
				return err
			}
			if firstErr == nil {
				firstErr = err
			}
			return nil
		}
		kernels++
		total.Types += s.Types
		total.Bytes += s.Bytes
		total.Modules += s.Modules
		total.ModuleBytes += s.ModuleBytes
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", s.Key, s.Types, s.Bytes, s.Modules, s.ModuleBytes)
		return nil
	})
	if err != nil {
		return fmt.Errorf("corpus ls: %w", err)
	}
	if kernels == 0 && firstErr != nil {
		return fmt.Errorf("corpus ls: no kernel read (%d skipped)", skipped)
	}
	fmt.Fprintf(tw, "total: %s\t%d\t%d\t%d\t%d\n", plural.Count(kernels, "kernel"), total.Types, total.Bytes, total.Modules, total.ModuleBytes)
	if err := tw.Flush(); err != nil {
		return err
	}
	if skipped > 0 {
		fmt.Fprintf(stderr, "btfembed corpus ls: skipped %d\n", skipped)
	}
	return nil
}

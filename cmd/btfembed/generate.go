package main

import (
	"context"
	"flag"
	"fmt"
	"go/build"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/cache"
	"github.com/btfembed/btfembed/internal/emit"
	"github.com/btfembed/btfembed/internal/kernelarch"
	"github.com/btfembed/btfembed/internal/safetext"
)

const generateHelp = `Usage: btfembed [flags] [object or glob...]
       btfembed <subcommand> [arguments]

Embeds, for every kernel of a BTF corpus, the minimal BTF that the CO-RE
relocations of BPF objects need, and writes Go source that serves it at run
time. Typical use, beside bpf2go:

	//go:generate go tool bpf2go -target amd64,arm64 bpf bpf/agent.c
	//go:generate go tool btfembed -corpus ../btfhub-archive

With no objects named, btfembed finds the BPF objects the package embeds
(bpf2go's <stem>_<target>.o) for each GOARCH their build constraints allow,
checks each against the kernels of its architecture (bpf_x86_bpfel.o:
x86_64; a generic bpf_bpfel.o: every little-endian kernel) and writes one
payload per GOARCH, kernelbtf_<goarch>.go and .btfembed, so a binary embeds
only its own architecture's kernels (GOARCHes the corpus has no kernels for
share kernelbtf_other.go and an empty payload). Objects named on the command line go
into one kernelbtf.go for all kernels instead, each still checked only
against the kernels it pairs with.

Every kernel's result is checked against cilium/ebpf's relocation of the
full BTF before it is embedded. The report at the end predicts, for every
program and kernel, whether the program loads: whether the verifier will
reach an instruction that CO-RE poisoned there (-v also lists the guarded
ones, and every relocation that does not resolve somewhere; -report has
it all as JSON). -fail-on-unloadable turns a program predicted to fail
into a failed run, for CI.

Results are cached in $BTFEMBED_CACHE (default: btfembed in the user cache
directory; "off" disables it; see 'btfembed cache'), so a rerun redoes only
kernels and relocations it has not seen. A cache that cannot be used is a
warning; -cache-verify recomputes every kernel and replaces a cached
result that differs. With -shard i/n only a stable 1/n of the corpus is
processed, into a part file for 'btfembed merge'. Memory is
softly limited to 40 MiB plus 56 MiB per worker unless $GOMEMLIMIT is set.

Subcommands:
%s
Run "btfembed help <subcommand>" for one's arguments.

Flags:
`

type generateFlags struct {
	corpus  stringList
	pkg     string
	output  string
	ident   string
	arch    stringList
	kernels string
	workers int
	strict  bool
	report  string
	// replaceLayout: -replace-layout (outputs.replaceLayout).
	replaceLayout bool
	quiet         bool
	verbose       bool
	// failOnUnloadable fails the run when a program is predicted to fail
	// to load on some kernel, for CI.
	failOnUnloadable bool
	shard            shardFlag
	cacheVerify      bool
	// check compares the outputs with the files on disk instead of
	// writing them (-check).
	check bool
}

type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// checkEnvVar, set to 1, turns on -check by default, so that CI checks
// every btfembed go:generate line of a module as it is written, with go
// generate, and the outputs it compares hold that line.
const checkEnvVar = "BTFEMBED_CHECK"

// pathFlags are the flags whose values are paths, which the header's
// command line gives relative to the package.
var pathFlags = []string{"corpus", "output", "report"}

func newGenerateFlagSet(f *generateFlags, output io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("btfembed", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() { writeGenerateHelp(fs.Output()) }
	fs.Var(&f.corpus, "corpus", "kernel BTF corpus `dir`ectory or file (repeatable; default $BTFEMBED_CORPUS, a list like $PATH); see 'btfembed help corpus'")
	fs.StringVar(&f.pkg, "pkg", os.Getenv("GOPACKAGE"), "Go package `name` of the output (default $GOPACKAGE, which go generate sets, else the package in the output directory)")
	fs.StringVar(&f.output, "output", "kernelbtf.go", "Go `file` to write, or a directory to write kernelbtf.go in; payloads go beside it and, per GOARCH, kernelbtf_<goarch>.go")
	fs.StringVar(&f.ident, "ident", "KernelBTF", "`name` of the generated function; a lower-case name keeps it unexported")
	fs.Var(&f.arch, "arch", "only kernels of these `arch`itectures (comma-separated or repeated: x86_64, arm64, ...)")
	fs.StringVar(&f.kernels, "kernels", "", "only kernel releases matching this `glob` (\"6.1.*\")")
	// 0, not this machine's CPU count, so the help reads the same everywhere.
	fs.IntVar(&f.workers, "workers", 0, "kernels processed at once; fewer than GOMAXPROCS also lowers GOMAXPROCS to it (default: all cores, GOMAXPROCS)")
	fs.BoolVar(&f.strict, "strict", false, "fail on a corpus entry that cannot be read instead of skipping it")
	fs.BoolVar(&f.replaceLayout, "replace-layout", false, "remove the files an earlier run wrote in the other layout (kernelbtf_<goarch>.go per GOARCH when objects are named, or kernelbtf.go when none are), which a run otherwise refuses to replace")
	fs.StringVar(&f.report, "report", "", "write the report (coverage and load prediction per kernel) as JSON to `file`")
	fs.BoolVar(&f.quiet, "q", false, "print only errors and the summary line")
	fs.BoolVar(&f.verbose, "v", false, "also list guarded misses (poisoned instructions no path reaches) and every relocation that does not resolve somewhere")
	fs.BoolVar(&f.failOnUnloadable, "fail-on-unloadable", false, "exit with an error, after writing the output, when a program is predicted to fail to load on some kernel (for CI)")
	fs.Var(&f.shard, "shard", "process only shard `i/n` of the corpus (0 <= i < n) and write a part for 'btfembed merge' beside -output")
	fs.BoolVar(&f.check, "check", os.Getenv(checkEnvVar) == "1", "write nothing: generate in memory and fail, naming them, if the Go files and payloads on disk differ from what this run would write, for CI (a payload that no longer matches its objects); "+checkEnvVar+"=1 go generate ./... checks every btfembed go:generate line as written; -report is still written (default $"+checkEnvVar+"=1)")
	fs.BoolVar(&f.cacheVerify, "cache-verify", cache.VerifyFromEnv(), "verify mode, for a cache restored from a less trusted source (CI caches of other branches): process every kernel from the corpus and replace, with a warning, a cached result that differs (default $"+cache.VerifyEnvVar+"=1); see docs/cache.md")
	return fs
}

// writeGenerateHelp writes btfembed's help: the generate mode, the
// subcommands and the flags.
func writeGenerateHelp(w io.Writer) error {
	fs := newGenerateFlagSet(&generateFlags{}, w)
	fmt.Fprintf(w, generateHelp, subcommandList())
	fs.PrintDefaults()
	return nil
}

// parseGenerateFlags parses the command line of the generate mode and
// returns the flags and the objects named, globs expanded.
func parseGenerateFlags(stdout io.Writer, args []string) (*generateFlags, []string, error) {
	f := &generateFlags{}
	// The error is printed once, by main; -h prints the help to stdout.
	fs := newGenerateFlagSet(f, io.Discard)
	fs.Usage = func() {}
	if err := parseInterspersed(fs, args); err != nil {
		if err == flag.ErrHelp {
			writeGenerateHelp(stdout)
			return nil, nil, err
		}
		return nil, nil, usagef("%w (btfembed -h lists the flags)", err)
	}
	if f.pkg == "" {
		// Outside go generate, the package the output goes into names
		// itself, as its Go files say.
		dir := f.output
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			dir = filepath.Dir(dir)
		}
		if p, err := build.ImportDir(dir, 0); err == nil && p.Name != "" {
			f.pkg = p.Name
		} else {
			return nil, nil, usagef("-pkg is required outside go generate ($GOPACKAGE is unset) where %s holds no Go package", dir)
		}
	}
	switch {
	case f.workers < 0:
		return nil, nil, usagef("-workers %d: want a positive number, or 0 for all cores", f.workers)
	case f.workers == 0:
		f.workers = runtime.GOMAXPROCS(0)
	}
	if f.check && f.shard.n > 0 {
		return nil, nil, usagef("-check and -shard: a shard writes a part, not the outputs -check compares; check the merge's")
	}
	if len(f.corpus) == 0 {
		for _, dir := range filepath.SplitList(os.Getenv("BTFEMBED_CORPUS")) {
			if dir != "" {
				f.corpus = append(f.corpus, dir)
			}
		}
	}
	if len(f.corpus) == 0 {
		return nil, nil, usagef("no corpus: give -corpus DIR or set $BTFEMBED_CORPUS")
	}
	var objs []string
	for _, pattern := range fs.Args() {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, nil, usagef("object pattern %q: %w", pattern, err)
		}
		if len(matches) == 0 {
			return nil, nil, fmt.Errorf("%s: no such object", pattern)
		}
		objs = append(objs, matches...)
	}
	return f, objs, nil
}

// goFile resolves -output to the Go file to write; per-GOARCH files take
// its name with _<goarch> added.
func (f *generateFlags) goFile() (string, error) {
	goFile := f.output
	if st, err := os.Stat(goFile); (err == nil && st.IsDir()) || strings.HasSuffix(goFile, string(filepath.Separator)) {
		goFile = filepath.Join(goFile, "kernelbtf.go")
	}
	if filepath.Ext(goFile) != ".go" {
		return "", usagef("-output %s: want a .go file or a directory", f.output)
	}
	return goFile, nil
}

func runGenerate(stdout, stderr io.Writer, args []string) error {
	f, objs, err := parseGenerateFlags(stdout, args)
	if err != nil {
		return err
	}
	goFile, err := f.goFile()
	if err != nil {
		return err
	}
	pkgDir := filepath.Dir(goFile)
	// A shard records the command without -shard: the one the merged
	// output carries, as one unsharded run would.
	command, err := commandLine(withoutFlag(args, "shard"), f.pkg, pkgDir)
	if err != nil {
		return err
	}
	// No default cache directory is a warning: the cache is an
	// optimization.
	cacheDir, err := cache.DirFromEnv()
	if err != nil {
		fmt.Fprintf(stderr, "btfembed: warning: %v; running without the cache\n", err)
	}
	setMemoryLimit(f.workers, objs)
	defer limitProcs(f.workers)()

	ctx := context.Background()
	genArgs := &generator.Args{
		Objects: objs,
		Corpus:  f.corpus,
		Arch:    f.arch,
		Kernels: f.kernels,
		Workers: f.workers,
		Strict:  f.strict,

		CacheDir:    cacheDir,
		CacheVerify: f.cacheVerify,
		Shard:       f.shard.i,
		Shards:      f.shard.n,
	}
	// perGOARCH lists, in the go:generate mode, the GOARCHes the package
	// embeds objects for; nil when the objects were named.
	var perGOARCH []string
	if len(objs) == 0 {
		// The package is the working directory, as go generate sets it.
		byGOARCH, err := emit.EmbeddedObjects(ctx, ".")
		if err != nil {
			return err
		}
		perGOARCH, genArgs.Objects, genArgs.ObjectArches = pairEmbedded(byGOARCH)
		if len(genArgs.Objects) == 0 {
			return fmt.Errorf("the package embeds BPF objects only for GOARCHes without kernels btfembed knows: %s", strings.Join(perGOARCH, ", "))
		}
	}
	var prog progress
	if !f.quiet {
		prog = newProgress(stderr, isTerminal(stderr), 5*time.Second, terminalWidth(stderr))
		genArgs.Progress = prog
	}
	res, err := generator.Generate(ctx, genArgs)
	if prog != nil {
		prog.stop()
	}
	if err != nil {
		return err
	}
	if f.shard.n > 0 {
		return writeShard(stdout, stderr, f, goFile, partMeta{Command: command, GOARCHes: perGOARCH}, res)
	}
	return writeResult(stdout, stderr, f, goFile, command, perGOARCH, res)
}

// writeResult writes what a run (or a merge of shards) produced: the Go
// files and payloads, one per GOARCH in perGOARCH or one for all when it
// is nil, the report, the table and the summary line.
func writeResult(stdout, stderr io.Writer, f *generateFlags, goFile, command string, perGOARCH []string, res *generator.Result) error {
	out := &outputs{pkg: f.pkg, ident: f.ident, command: command, replaceLayout: f.replaceLayout, check: f.check}
	if perGOARCH == nil {
		if err := out.add(goFile, nil, res); err != nil {
			return err
		}
	}
	// GOARCHes without kernels share one file with an empty payload, so
	// the package builds for them without a file each.
	var empty []string
	var emptyPart *generator.Result
	for _, goarch := range perGOARCH {
		part := res.ForArch(kernelarch.OfGOARCH(goarch))
		if len(part.Report.Kernels) == 0 {
			empty, emptyPart = append(empty, goarch), part
			continue
		}
		name := strings.TrimSuffix(goFile, ".go") + "_" + goarch + ".go"
		if err := out.add(name, []string{goarch}, part); err != nil {
			return err
		}
	}
	if len(empty) > 0 {
		if f.verbose {
			// Expected with bpf2go's standard targets (its x86 object also
			// builds for 386), so said only when asked.
			fmt.Fprintf(stderr, "btfembed: no kernels for GOARCH %s: %s holds an empty payload for them, so their binaries use the kernel's own BTF or report the kernel unsupported\n",
				strings.Join(empty, ", "), filepath.Base(otherFile(goFile)))
		}
		if err := out.add(otherFile(goFile), empty, emptyPart); err != nil {
			return err
		}
	}
	// The report and the summary count the payloads written: in the
	// go:generate mode, one per GOARCH, never one of every kernel.
	res.Report.PayloadBytes = out.payloadBytes
	if f.report != "" {
		// 40 KB of JSON per kernel with a dozen objects: written to its
		// temporary file kernel by kernel, never in memory whole.
		out.report = &outputFile{Path: f.report, Write: res.Report.WriteJSON}
	}
	if err := out.write(goFile); err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "btfembed: warning: %s\n", w)
	}
	if f.quiet {
		// Without -q the progress printed these as they came.
		for _, s := range res.Report.Skipped {
			fmt.Fprintf(stderr, "btfembed: skipped %s: %s\n", safetext.Escape(s.Path), safetext.Escape(s.Error))
		}
	}
	if !f.quiet {
		if err := res.Report.WriteTable(stdout, &generator.TableOptions{Verbose: f.verbose}); err != nil {
			return err
		}
	}
	r := res.Report
	summary(stderr, r, out.wrote())
	if f.failOnUnloadable {
		if err := r.CheckLoadable(); err != nil {
			if f.quiet {
				return fmt.Errorf("%w (run without -q for the report of why)", err)
			}
			return fmt.Errorf("%w (the report above says why)", err)
		}
	}
	return nil
}

// otherFile is the Go file for the GOARCHes without kernels: <stem>_other.go
// ("other" is no GOARCH, so the name implies no constraint).
func otherFile(goFile string) string {
	return strings.TrimSuffix(goFile, ".go") + "_other.go"
}

// pairEmbedded turns the objects a package embeds per GOARCH into the
// generator's arguments: every object, narrowed to the kernel
// architectures of the GOARCHes that embed it. GOARCHes without a kernel
// architecture (mips) still get a payload, an empty one, so the package
// builds for them.
func pairEmbedded(byGOARCH map[string][]string) (goarches, objs []string, arches map[string][]string) {
	arches = map[string][]string{}
	for goarch, embedded := range byGOARCH {
		goarches = append(goarches, goarch)
		arch := kernelarch.OfGOARCH(goarch)
		if arch == "" {
			continue
		}
		for _, o := range embedded {
			if !slices.Contains(arches[o], arch) {
				arches[o] = append(arches[o], arch)
			}
		}
	}
	for o := range arches {
		objs = append(objs, o)
		slices.Sort(arches[o])
	}
	slices.Sort(goarches)
	slices.Sort(objs)
	return goarches, objs, arches
}

// commandLine is the invocation recorded in the generated header, to be
// run as written from the directory of the generated file (the package,
// where go generate runs it): paths relative to it, and
// -pkg given when it came from $GOPACKAGE. A corpus taken from
// $BTFEMBED_CORPUS is not recorded, so the header is the same on every
// developer's machine.
func commandLine(args []string, pkg, pkgDir string) (string, error) {
	fs := newGenerateFlagSet(&generateFlags{}, io.Discard)
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	absPkg, err := filepath.Abs(pkgDir)
	if err != nil {
		return "", err
	}
	rel := func(p string) (string, error) {
		if !filepath.IsAbs(p) && absPkg == cwd {
			return p, nil // as given
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		r, err := filepath.Rel(absPkg, abs)
		if err != nil {
			return "", err
		}
		return filepath.ToSlash(r), nil
	}

	parts := []string{"go", "tool", "btfembed"}
	pkgGiven := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if a == "--" {
			// Objects only from here, "--" kept so they still are.
			for _, o := range args[i:] {
				r := o
				if o != "--" {
					if r, err = rel(o); err != nil {
						return "", err
					}
				}
				parts = append(parts, r)
			}
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			// An object; flags may follow it (parseInterspersed).
			r, err := rel(a)
			if err != nil {
				return "", err
			}
			parts = append(parts, r)
			continue
		}
		fl := fs.Lookup(name)
		if fl == nil {
			parts = append(parts, a)
			continue
		}
		if name == "check" {
			continue // a run that writes nothing records nothing
		}
		pkgGiven = pkgGiven || name == "pkg"
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			parts = append(parts, a)
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		if slices.Contains(pathFlags, name) {
			if value, err = rel(value); err != nil {
				return "", err
			}
		}
		parts = append(parts, "-"+name, value)
	}
	if !pkgGiven {
		parts = slices.Insert(parts, 3, "-pkg", pkg)
	}
	// Quoted where it holds anything but plain path characters, no part
	// can span lines or end the comment the header is written in.
	for i, p := range parts {
		if p == "" || strings.ContainsFunc(p, notPlain) {
			parts[i] = strconv.Quote(p)
		}
	}
	return strings.Join(parts, " "), nil
}

// notPlain tells the characters that make commandLine quote an argument.
func notPlain(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_./=,:+@%^~", r))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth returns the columns of the terminal w is, asked at each
// call (the window may be resized), or 80 where it cannot tell.
func terminalWidth(w io.Writer) func() int {
	return func() int {
		if f, ok := w.(*os.File); ok {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
				return cols
			}
		}
		return 80
	}
}

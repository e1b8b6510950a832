package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/cache"
)

const generateHelp = `Usage: btfembed [flags] <object or glob>...

Embeds, for every kernel of a BTF corpus, the minimal BTF that the CO-RE
relocations of the BPF objects need, and writes Go source that serves it at
run time. Typical use, next to bpf2go's output:

	//go:generate go tool btfembed -corpus ../btfhub-archive bpf_bpfel.o

Every kernel's result is checked against cilium/ebpf's relocation of the
full BTF before it is embedded. Relocations that do not resolve on some
kernels are listed at the end (and in -report).

Results are cached in $BTFEMBED_CACHE (default: btfembed in the user cache
directory; "off" disables it; see 'btfembed cache'), so a rerun redoes only
kernels and objects it has not seen. With -shard i/n only a stable 1/n of
the corpus is processed, into a part file for 'btfembed merge'.

Memory is softly limited to 48 MiB plus 64 MiB per worker unless
$GOMEMLIMIT is set.

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
	quiet   bool
	shard   shardFlag
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

func parseGenerateFlags(stderr io.Writer, args []string) (*generateFlags, []string, error) {
	f := &generateFlags{}
	fs := flag.NewFlagSet("btfembed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, generateHelp)
		fs.PrintDefaults()
	}
	fs.Var(&f.corpus, "corpus", "kernel BTF corpus `dir`ectory or file (repeatable); see 'btfembed corpus'")
	fs.StringVar(&f.pkg, "pkg", os.Getenv("GOPACKAGE"), "Go package `name` of the output (default $GOPACKAGE, set by go generate)")
	fs.StringVar(&f.output, "output", "kernelbtf.go", "Go `file` to write, or a directory to write kernelbtf.go in; the payload goes beside it")
	fs.StringVar(&f.ident, "ident", "KernelBTF", "`name` of the generated function")
	fs.Var(&f.arch, "arch", "only kernels of these `arch`itectures (comma-separated or repeated: x86_64, arm64, ...)")
	fs.StringVar(&f.kernels, "kernels", "", "only kernel releases matching this `glob` (\"6.1.*\")")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "kernels processed at once")
	fs.BoolVar(&f.strict, "strict", false, "fail on a corpus entry that cannot be read instead of skipping it")
	fs.StringVar(&f.report, "report", "", "write the coverage report as JSON to `file`")
	fs.BoolVar(&f.quiet, "q", false, "print only errors and the summary line")
	fs.Var(&f.shard, "shard", "process only shard `i/n` of the corpus (0 <= i < n) and write a part for 'btfembed merge' beside -output")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return nil, nil, fmt.Errorf("no BPF objects given: %w", errUsage)
	}
	if len(f.corpus) == 0 {
		return nil, nil, fmt.Errorf("-corpus is required: %w", errUsage)
	}
	var objs []string
	for _, pattern := range fs.Args() {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, nil, fmt.Errorf("object pattern %q: %w", pattern, err)
		}
		if len(matches) == 0 {
			return nil, nil, fmt.Errorf("%s: no such object", pattern)
		}
		objs = append(objs, matches...)
	}
	return f, objs, nil
}

// outputPaths resolves -output to the Go file and the payload beside it,
// and the package name when -pkg is empty.
func (f *generateFlags) outputPaths() (goFile, payload, pkg string, err error) {
	goFile = f.output
	if st, err := os.Stat(goFile); (err == nil && st.IsDir()) || strings.HasSuffix(goFile, string(filepath.Separator)) {
		goFile = filepath.Join(goFile, "kernelbtf.go")
	}
	if filepath.Ext(goFile) != ".go" {
		return "", "", "", fmt.Errorf("-output %s: want a .go file or a directory: %w", f.output, errUsage)
	}
	payload = strings.TrimSuffix(goFile, ".go") + ".btfembed"
	pkg = f.pkg
	if pkg == "" {
		abs, err := filepath.Abs(filepath.Dir(goFile))
		if err != nil {
			return "", "", "", err
		}
		pkg = filepath.Base(abs)
		if !isGoIdent(pkg) {
			return "", "", "", fmt.Errorf("no -pkg and $GOPACKAGE is unset: %w", errUsage)
		}
	}
	return goFile, payload, pkg, nil
}

func isGoIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return s != ""
}

func runGenerate(stdout, stderr io.Writer, args []string) error {
	f, objs, err := parseGenerateFlags(stderr, args)
	if err != nil {
		return err
	}
	goFile, payloadFile, pkg, err := f.outputPaths()
	if err != nil {
		return err
	}

	cacheDir, err := cache.DirFromEnv()
	if err != nil {
		return err
	}
	setMemoryLimit(f.workers)
	var progress generator.Progress
	if !f.quiet {
		progress = generator.NewProgress(stderr, isTerminal(stderr), 5*time.Second)
	}
	res, err := generator.Generate(context.Background(), &generator.Args{
		Objects:  objs,
		Corpus:   f.corpus,
		Arch:     f.arch,
		Kernels:  f.kernels,
		Workers:  f.workers,
		Strict:   f.strict,
		Progress: progress,
		CacheDir: cacheDir,
		Shard:    f.shard.i,
		Shards:   f.shard.n,
	})
	if err != nil {
		return err
	}
	if f.shard.n > 0 {
		return writeShard(stdout, stderr, f, args, goFile, res)
	}
	return writeGo(stdout, stderr, f, goFile, payloadFile, pkg, commandLine(args), res)
}

// writeGo emits the Go source for a result and writes it with the
// payload; command is the invocation its header records.
func writeGo(stdout, stderr io.Writer, f *generateFlags, goFile, payloadFile, pkg, command string, res *generator.Result) error {
	var src strings.Builder
	err := generator.Emit(&src, generator.EmitArgs{
		Package:     pkg,
		Ident:       f.ident,
		PayloadFile: filepath.Base(payloadFile),
		Command:     command,
		Report:      res.Report,
	})
	if err != nil {
		return err
	}
	return writeOutputs(stdout, stderr, res.Report, f.quiet, f.report,
		outputFile{payloadFile, res.Payload}, outputFile{goFile, []byte(src.String())})
}

type outputFile struct {
	path string
	data []byte
}

// writeOutputs writes files in the order given (the payload first: a Go
// file never refers to a payload not there), the JSON report when
// reportFile is set, the table unless quiet, and the summary line, which
// names the last file.
func writeOutputs(stdout, stderr io.Writer, r *generator.Report, quiet bool, reportFile string, files ...outputFile) error {
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(f.path, f.data); err != nil {
			return err
		}
	}
	if reportFile != "" {
		var b strings.Builder
		if err := r.WriteJSON(&b); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(reportFile, []byte(b.String())); err != nil {
			return err
		}
	}
	if !quiet {
		if err := r.WriteTable(stdout); err != nil {
			return err
		}
	}
	cached := ""
	if r.CachedResults+r.CachedBTF > 0 {
		cached = fmt.Sprintf(", cached: %d results, %d more kernels' BTF", r.CachedResults, r.CachedBTF)
	}
	fmt.Fprintf(stderr, "btfembed: %d kernels (%d skipped%s), %d distinct BTF blobs, %d payload bytes, %s: wrote %s\n",
		len(r.Kernels), len(r.Skipped), cached, r.Blobs, r.PayloadBytes, r.Duration.Round(time.Millisecond), files[len(files)-1].path)
	return nil
}

// commandLine is the invocation recorded in the generated header. Absolute
// paths are cut to their base name so no host path leaks into the source.
func commandLine(args []string) string {
	parts := []string{"btfembed"}
	for _, a := range args {
		if filepath.IsAbs(a) {
			a = filepath.Base(a)
		} else if k, v, ok := strings.Cut(a, "="); ok && filepath.IsAbs(v) {
			a = k + "=" + filepath.Base(v)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

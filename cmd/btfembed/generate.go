package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/atomicfile"
)

const generateHelp = `Usage: btfembed [flags] <object or glob>...

Embeds, for every kernel of a BTF corpus, the minimal BTF that the CO-RE
relocations of the BPF objects need, and writes Go source that serves it at
run time. Typical use, next to bpf2go's output:

	//go:generate go tool btfembed -corpus ../btfhub-archive bpf_bpfel.o

Every kernel's result is checked against cilium/ebpf's relocation of the
full BTF before it is embedded. Relocations that do not resolve on some
kernels are listed at the end (and in -report).

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

	var progress generator.Progress
	if !f.quiet {
		progress = newProgress(stderr, isTerminal(stderr), 5*time.Second)
	}
	res, err := generator.Generate(context.Background(), &generator.Args{
		Objects:  objs,
		Corpus:   f.corpus,
		Arch:     f.arch,
		Kernels:  f.kernels,
		Workers:  f.workers,
		Strict:   f.strict,
		Progress: progress,
	})
	if err != nil {
		return err
	}

	var src strings.Builder
	err = generator.Emit(&src, generator.EmitArgs{
		Package:     pkg,
		Ident:       f.ident,
		PayloadFile: filepath.Base(payloadFile),
		Command:     commandLine(args),
		Report:      res.Report,
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(goFile), 0o755); err != nil {
		return err
	}
	// All outputs are written before any replaces its old version: a bad
	// -report path or a full disk leaves the previous Go file and payload.
	var out atomicfile.Set
	defer out.Abort()
	if err := out.AddBytes(payloadFile, res.Payload); err != nil {
		return err
	}
	if err := out.AddBytes(goFile, []byte(src.String())); err != nil {
		return err
	}
	if f.report != "" {
		if err := out.Add(f.report, res.Report.WriteJSON); err != nil {
			return err
		}
	}
	if err := out.Commit(); err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "btfembed: warning: %s\n", w)
	}
	if f.quiet {
		// Without -q the progress printed these as they came.
		for _, s := range res.Report.Skipped {
			fmt.Fprintf(stderr, "btfembed: skipped %s: %s\n", s.Path, s.Error)
		}
	} else {
		if err := res.Report.WriteTable(stdout); err != nil {
			return err
		}
	}
	r := res.Report
	fmt.Fprintf(stderr, "btfembed: %d kernels (%d skipped), %d distinct BTF blobs, %d payload bytes, %s: wrote %s\n",
		len(r.Kernels), len(r.Skipped), r.Blobs, r.PayloadBytes, r.Duration.Round(time.Millisecond), goFile)
	return nil
}

// commandLine is the invocation recorded in the generated header. Absolute
// paths are cut to their base name so no host path leaks into the source,
// and an argument with anything but plain path characters is quoted, so
// none can span lines or end the comment it is written in.
func commandLine(args []string) string {
	parts := []string{"btfembed"}
	for _, a := range args {
		if filepath.IsAbs(a) {
			a = filepath.Base(a)
		} else if k, v, ok := strings.Cut(a, "="); ok && filepath.IsAbs(v) {
			a = k + "=" + filepath.Base(v)
		}
		if a == "" || strings.ContainsFunc(a, notPlain) {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// notPlain tells the characters that make commandLine quote an argument.
func notPlain(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_./=,:+@%^~", r))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

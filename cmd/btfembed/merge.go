package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/btfembed/btfembed/generator"
)

// shardFlag is -shard i/n.
type shardFlag struct{ i, n int }

func (s *shardFlag) String() string {
	if s.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.i, s.n)
}

func (s *shardFlag) Set(v string) error {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return fmt.Errorf("want i/n with 0 <= i < n, as 3/8")
	}
	s.i, s.n = i, n
	return nil
}

// partPath is the part file a shard writes beside the Go file:
// kernelbtf.go, shard 3/8 gives kernelbtf.part-3-of-8.
func partPath(goFile string, s shardFlag) string {
	return fmt.Sprintf("%s.part-%d-of-%d", strings.TrimSuffix(goFile, ".go"), s.i, s.n)
}

// writeShard writes a shard's part. The part records the command line
// without -shard, which is the one the merged Go file then carries: the
// same bytes an unsharded run with the other flags unchanged writes.
func writeShard(stdout, stderr io.Writer, f *generateFlags, args []string, goFile string, res *generator.Result) error {
	var b bytes.Buffer
	if err := res.WritePart(&b, commandLine(withoutFlag(args, "shard"))); err != nil {
		return err
	}
	return writeOutputs(stdout, stderr, res.Report, f.quiet, f.report, outputFile{partPath(goFile, f.shard), b.Bytes()})
}

// withoutFlag drops a flag and its value from a command line.
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		switch {
		case a == name && len(args[i]) > len(a):
			i++ // its value
		case strings.HasPrefix(a, name+"=") && len(args[i]) > len(a):
		default:
			out = append(out, args[i])
		}
	}
	return out
}

const mergeHelp = `Usage: btfembed merge [flags] <part>...

Joins the parts that 'btfembed -shard i/n' runs wrote, one per shard, into
the Go file and payload one unsharded run writes: the same bytes, when the
shards ran with the same flags. Every shard of the split must be given
once. Typical use is a CI matrix, one job per shard, then one merge job;
see docs/sharding.md.

Flags:
`

func runMerge(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("btfembed merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, mergeHelp)
		fs.PrintDefaults()
	}
	f := &generateFlags{}
	fs.StringVar(&f.pkg, "pkg", os.Getenv("GOPACKAGE"), "Go package `name` of the output (default $GOPACKAGE, set by go generate)")
	fs.StringVar(&f.output, "output", "kernelbtf.go", "Go `file` to write, or a directory to write kernelbtf.go in; the payload goes beside it")
	fs.StringVar(&f.ident, "ident", "KernelBTF", "`name` of the generated function")
	fs.StringVar(&f.report, "report", "", "write the merged coverage report as JSON to `file`")
	fs.BoolVar(&f.quiet, "q", false, "print only errors and the summary line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("no parts given: %w", errUsage)
	}
	goFile, payloadFile, pkg, err := f.outputPaths()
	if err != nil {
		return err
	}
	var parts []generator.Part
	for _, p := range fs.Args() {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		parts = append(parts, generator.Part{Name: p, Data: data})
	}
	res, command, err := generator.Merge(parts)
	if err != nil {
		return err
	}
	return writeGo(stdout, stderr, f, goFile, payloadFile, pkg, command, res)
}

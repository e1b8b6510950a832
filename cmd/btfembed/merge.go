package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/btfembed/btfembed/internal/kernelarch"
	"github.com/btfembed/btfembed/internal/plural"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/regfile"
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

// partMeta is what a shard records in its part for merge to write the
// output one unsharded run writes.
type partMeta struct {
	Command  string   // the header's command line, without -shard
	GOARCHes []string // the payloads per GOARCH of the go:generate mode; nil for one payload
}

// maxPart bounds a part file merge reads: every kernel's minimized BTF of
// one shard, a few KB to a few hundred KB each.
const maxPart = 1 << 30

// check refuses meta that would name an output twice or outside the
// package: each GOARCH once, and only GOARCHes Go builds Linux programs
// for.
func (m *partMeta) check() error {
	for i, g := range m.GOARCHes {
		if !kernelarch.IsLinuxGOARCH(g) {
			return fmt.Errorf("GOARCH %q is not one Go builds Linux programs for", g)
		}
		if slices.Contains(m.GOARCHes[:i], g) {
			return fmt.Errorf("GOARCH %s listed twice", g)
		}
	}
	return nil
}

// partPath is the part file a shard writes beside the Go file:
// kernelbtf.go, shard 3/8 gives kernelbtf.part-3-of-8.
func partPath(goFile string, s shardFlag) string {
	return fmt.Sprintf("%s.part-%d-of-%d", strings.TrimSuffix(goFile, ".go"), s.i, s.n)
}

// writeShard writes a shard's part and, with -report, the shard's report.
func writeShard(stdout, stderr io.Writer, f *generateFlags, goFile string, meta partMeta, res *generator.Result) error {
	m, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := res.WritePart(&b, m); err != nil {
		return err
	}
	// The -output directory is created as an unsharded run creates it.
	if err := os.MkdirAll(filepath.Dir(goFile), 0o755); err != nil {
		return err
	}
	files := []atomicfile.File{{Path: partPath(goFile, f.shard), Data: b.Bytes()}}
	if f.report != "" {
		files = append(files, atomicfile.File{Path: f.report, Write: res.Report.WriteJSON})
	}
	kept, err := atomicfile.WriteFiles(files)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "btfembed: warning: %s\n", w)
	}
	if !f.quiet {
		if err := res.Report.WriteTable(stdout, &generator.TableOptions{Verbose: f.verbose}); err != nil {
			return err
		}
	}
	summary(stderr, res.Report, wroteList([]string{files[0].Path}, kept))
	return nil
}

// summary is the line every run ends with; wrote says which files were
// written and which were already up to date (wroteList).
func summary(stderr io.Writer, r *generator.Report, wrote string) {
	cached := ""
	if r.CachedResults+r.CachedBTF > 0 {
		cached = fmt.Sprintf(", cached: %s, %d more kernels' BTF", plural.Count(r.CachedResults, "result"), r.CachedBTF)
	}
	fmt.Fprintf(stderr, "btfembed: %s (%d skipped%s), %s, %s, %s: %s\n",
		plural.Count(len(r.Kernels), "kernel"), len(r.Skipped), cached, plural.Count(r.Blobs, "distinct BTF blob"),
		plural.Count(r.PayloadBytes, "payload byte"), r.Duration.Round(time.Millisecond), wrote)
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
the Go files and payloads one unsharded run writes: the same bytes, when
the shards ran with the same flags. Every shard of the split must be
given once. Typical use is a CI matrix, one job per shard, then one merge
job; see docs/sharding.md.

Flags:
`

func runMerge(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("merge", mergeHelp, stderr)
	f := &generateFlags{}
	fs.StringVar(&f.pkg, "pkg", os.Getenv("GOPACKAGE"), "Go package `name` of the output (default $GOPACKAGE, set by go generate)")
	fs.StringVar(&f.output, "output", "kernelbtf.go", "Go `file` to write, or a directory to write kernelbtf.go in; payloads go beside it")
	fs.StringVar(&f.ident, "ident", "KernelBTF", "`name` of the generated function")
	fs.StringVar(&f.report, "report", "", "write the merged report as JSON to `file`")
	fs.BoolVar(&f.quiet, "q", false, "print only errors and the summary line")
	fs.BoolVar(&f.verbose, "v", false, "also list guarded misses and every relocation that does not resolve somewhere")
	fs.BoolVar(&f.failOnUnloadable, "fail-on-unloadable", false, "exit with an error, after writing the output, when a program is predicted to fail to load on some kernel (for CI)")
	fs.BoolVar(&f.check, "check", os.Getenv(checkEnvVar) == "1", "write nothing: merge in memory and fail, naming them, if the Go files and payloads on disk differ from what this merge would write, for CI; -report is still written (default $"+checkEnvVar+"=1)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usagef("merge: no parts given")
	}
	if f.pkg == "" {
		return usagef("merge: -pkg is required outside go generate ($GOPACKAGE is unset)")
	}
	goFile, err := f.goFile()
	if err != nil {
		return err
	}
	var parts []generator.Part
	for _, p := range fs.Args() {
		data, err := regfile.ReadFile(p, maxPart)
		if err != nil {
			return err
		}
		parts = append(parts, generator.Part{Name: p, Data: data})
	}
	res, m, err := generator.Merge(parts)
	if err != nil {
		return err
	}
	var meta partMeta
	if err := json.Unmarshal(m, &meta); err != nil {
		return fmt.Errorf("%w: %s: %w", generator.ErrPart, parts[0].Name, err)
	}
	if err := meta.check(); err != nil {
		return fmt.Errorf("%w: %s: %w", generator.ErrPart, parts[0].Name, err)
	}
	return writeResult(stdout, stderr, f, goFile, meta.Command, meta.GOARCHes, res)
}

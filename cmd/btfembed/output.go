package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/emit"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/regfile"
)

// outputs collects what a generate run writes, so that all of it is
// renamed into place together, and then removes the outputs of earlier
// runs that this one no longer writes.
type outputs struct {
	pkg, ident, command string
	// replaceLayout lets write remove the Go files of the other layout
	// (-replace-layout).
	replaceLayout bool
	// check makes write compare the Go files and payloads with the files
	// on disk instead of writing them (-check).
	check bool
	files []outputFile // the Go files and payloads
	// report is the -report file, if any, written with the files, or
	// alone with check.
	report       *outputFile
	payloadBytes int      // of the payloads added
	kept         []string // files write found already up to date
	removed      []string // Go files of earlier runs write removed
}

type outputFile = atomicfile.File

// coverage is what the generated doc comment says of a report's payload.
func coverage(r *generator.Report) *emit.Coverage {
	c := &emit.Coverage{Objects: r.Objects, Blobs: r.Blobs, PayloadBytes: r.PayloadBytes}
	for _, k := range r.Kernels {
		c.Arches = append(c.Arches, k.Arch)
	}
	return c
}

// add emits the Go file and its payload for one result, built for the
// GOARCHes (nil: for all).
func (o *outputs) add(goFile string, goarches []string, res *generator.Result) error {
	payloadFile := strings.TrimSuffix(goFile, ".go") + ".btfembed"
	data, err := res.Payload()
	if err != nil {
		return err
	}
	// The Go file links module relocation exactly when the runtime will
	// ask for it: when the payload's directory lists modules.
	p, err := payload.Open(data)
	if err != nil {
		return fmt.Errorf("%s: %w", payloadFile, err)
	}
	res.Report.PayloadBytes = len(data) // for the Go file's doc comment
	o.payloadBytes += len(data)
	var src bytes.Buffer
	err = emit.Emit(&src, emit.Args{
		Package:     o.pkg,
		Ident:       o.ident,
		GOARCHes:    goarches,
		PayloadFile: filepath.Base(payloadFile),
		GoFile:      filepath.Base(goFile),
		Command:     o.command,
		Coverage:    coverage(res.Report),
		Modules:     p.HasModules(),
	})
	if err != nil {
		return err
	}
	// The payload first: a Go file never refers to a payload not there.
	o.files = append(o.files, outputFile{Path: payloadFile, Data: data}, outputFile{Path: goFile, Data: src.Bytes()})
	return nil
}

// wrote says which Go files write replaced and which it left as they
// were, for the summary line.
func (o *outputs) wrote() string {
	var names []string
	for _, f := range o.files {
		if filepath.Ext(f.Path) == ".go" {
			names = append(names, f.Path)
		}
	}
	out := wroteList(names, o.kept)
	if len(o.removed) > 0 {
		out += "; removed " + strings.Join(o.removed, ", ") + " (and their payloads)"
	}
	return out
}

// wroteList is "wrote a, b", "unchanged: a, b" or "wrote a; unchanged: b":
// which of names were replaced and which were kept (already holding the
// bytes).
func wroteList(names, kept []string) string {
	var wrote, same []string
	for _, n := range names {
		if slices.Contains(kept, n) {
			same = append(same, n)
		} else {
			wrote = append(wrote, n)
		}
	}
	var parts []string
	if len(wrote) > 0 {
		parts = append(parts, "wrote "+strings.Join(wrote, ", "))
	}
	if len(same) > 0 {
		parts = append(parts, "unchanged: "+strings.Join(same, ", "))
	}
	return strings.Join(parts, "; ")
}

// write writes every output, then removes what earlier runs generated
// beside goFile (<stem>.go or <stem>_<goarch>.go, with their payloads)
// and this run did not write: a GOARCH no longer embedded, which the
// summary lists, or, only with replaceLayout, the other layout's files.
// Without it a run whose layout differs from the files there writes
// nothing and says so: a build would still pass with the other files
// gone, embedding the kernels of one architecture or one object set
// instead of all. Files that do not open with btfembed's header are never
// removed.
func (o *outputs) write(goFile string) error {
	stale, err := o.stale(goFile)
	if err != nil {
		return err
	}
	if o.check {
		return o.compare(stale)
	}
	var other []string
	for _, name := range stale {
		if (name == goFile) != o.writes(goFile) {
			other = append(other, name)
		}
	}
	if len(other) > 0 && !o.replaceLayout {
		return layoutError(goFile, other, o.writes(goFile))
	}
	if err := os.MkdirAll(filepath.Dir(goFile), 0o755); err != nil {
		return err
	}
	files := o.files
	if o.report != nil {
		files = append(slices.Clip(files), *o.report)
	}
	kept, err := atomicfile.WriteFiles(files)
	if err != nil {
		return err
	}
	o.kept = kept
	for _, name := range stale {
		if err := os.Remove(name); err != nil {
			return err
		}
		if err := os.Remove(strings.TrimSuffix(name, ".go") + ".btfembed"); err != nil && !os.IsNotExist(err) {
			return err
		}
		o.removed = append(o.removed, name)
	}
	return nil
}

// errStale is the error of -check when an output is not what the run
// generates.
var errStale = errors.New("outputs are stale")

// compare is write for -check: it writes nothing but the report, and
// fails, naming them, if a Go file or payload on disk is missing or
// differs from what this run generates, or if one of stale (an earlier
// run's Go file this run would remove) is there. So a CI job fails on a
// payload that go generate would change: one that no longer matches its
// objects or its corpus, or was edited by hand.
func (o *outputs) compare(stale []string) error {
	var changed []string
	for _, f := range o.files {
		same, err := sameContents(f.Path, f.Data)
		if err != nil {
			return err
		}
		if same {
			o.kept = append(o.kept, f.Path)
		} else {
			changed = append(changed, f.Path)
		}
	}
	if o.report != nil {
		if err := atomicfile.Write(o.report.Path, o.report.Write); err != nil {
			return err
		}
	}
	var would []string
	if len(changed) > 0 {
		would = append(would, "write "+strings.Join(changed, ", "))
	}
	if len(stale) > 0 {
		would = append(would, "remove "+strings.Join(stale, ", "))
	}
	if len(would) > 0 {
		return fmt.Errorf("%w: go generate would %s: run go generate", errStale, strings.Join(would, " and "))
	}
	return nil
}

// sameContents says whether the regular file at path holds data; a
// missing file does not.
func sameContents(path string, data []byte) (bool, error) {
	got, err := regfile.ReadFile(path, int64(len(data))+1)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, regfile.ErrTooLarge) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(got, data), nil
}

// stale lists the Go files earlier runs generated beside goFile that this
// run does not write.
func (o *outputs) stale(goFile string) ([]string, error) {
	old, err := filepath.Glob(strings.TrimSuffix(goFile, ".go") + "_*.go")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range append(old, goFile) {
		if !o.writes(name) && generatedByUs(name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// writes says whether the run writes the file name.
func (o *outputs) writes(name string) bool {
	return slices.ContainsFunc(o.files, func(f outputFile) bool { return f.Path == name })
}

// layoutError refuses to replace the other layout's files without
// -replace-layout: one file for the named objects (single), or one per
// GOARCH.
func layoutError(goFile string, other []string, single bool) error {
	was, now := "one file per GOARCH (btfembed with no objects named, the go:generate mode)", "one "+filepath.Base(goFile)+" for all kernels (objects named on the command line)"
	if !single {
		was, now = now, was
	}
	verb := "were"
	if len(other) == 1 {
		verb = "was"
	}
	return fmt.Errorf("%s %s written in the other layout, %s; this run writes %s in their place. Nothing was written: remove them, or pass -replace-layout to have this run remove them",
		strings.Join(other, ", "), verb, was, now)
}

// generatedByUs tells whether a Go file opens with btfembed's header. Only
// a regular file can: the open (regfile.OpenNoFollow) follows no symlink
// and does not wait on a FIFO that matches the pattern.
func generatedByUs(name string) bool {
	f, _, err := regfile.OpenNoFollow(name, math.MaxInt64)
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return strings.TrimSpace(line) == "// "+emit.GeneratedHeader
}

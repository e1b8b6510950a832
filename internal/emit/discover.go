package emit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/btfembed/btfembed/internal/bpfobj"
	"github.com/btfembed/btfembed/internal/kernelarch"
)

// ErrNoEmbeddedObjects is returned by EmbeddedObjects for a package that
// embeds no BPF object for any Linux GOARCH.
var ErrNoEmbeddedObjects = errors.New("the package embeds no BPF object")

// EmbeddedObjects finds the BPF objects that the Go package in dir embeds
// with //go:embed, for each Linux GOARCH that embeds any: bpf2go writes
// one Go file per target, whose build constraint names the GOARCHes the
// object serves, and embeds <stem>_<target>.o from it. The paths are
// relative to dir, sorted.
//
// go/build finds the GOARCHes whose build constraints include a file with
// a //go:embed directive, and the package is listed with `go list` once
// for each of them, which resolves the patterns; only embedded files that
// are BPF ELF objects count.
func EmbeddedObjects(ctx context.Context, dir string) (map[string][]string, error) {
	goarches, err := embeddingGOARCHes(ctx, dir)
	if err != nil {
		return nil, err
	}
	var (
		mu     sync.Mutex
		byArch = map[string][]string{}
		errs   []error
		wg     sync.WaitGroup
	)
	for _, goarch := range goarches {
		wg.Go(func() {
			objs, err := embeddedFor(ctx, dir, goarch)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("GOARCH=%s: %w", goarch, err))
			} else if len(objs) > 0 {
				byArch[goarch] = objs
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return nil, errors.Join(errs...)
	}
	if len(byArch) == 0 {
		return nil, fmt.Errorf("%s: %w (run bpf2go first, or name the objects)", dir, ErrNoEmbeddedObjects)
	}
	return byArch, nil
}

// embeddingGOARCHes lists the Linux GOARCHes for which the package has
// a //go:embed directive: go/build parses the directives as the go
// command does (any space after go:embed, test files apart) and applies
// each GOARCH's build constraints.
func embeddingGOARCHes(ctx context.Context, dir string) ([]string, error) {
	var goarches []string
	for _, goarch := range kernelarch.LinuxGOARCHes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		bc := build.Default
		bc.GOOS, bc.GOARCH, bc.CgoEnabled = "linux", goarch, true
		pkg, err := bc.ImportDir(dir, 0)
		var noGo *build.NoGoError
		switch {
		case errors.As(err, &noGo):
			continue // no Go file for this GOARCH
		case err != nil:
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		if len(pkg.EmbedPatterns) > 0 {
			goarches = append(goarches, goarch)
		}
	}
	return goarches, nil
}

// embeddedFor lists the BPF objects the package embeds when built for
// linux/goarch.
func embeddedFor(ctx context.Context, dir, goarch string) ([]string, error) {
	pkg, err := goList(ctx, dir, goarch)
	if err != nil {
		return nil, err
	}
	files := pkg.EmbedFiles
	if pkg.Error != nil {
		// go list drops every embedded file when one pattern matches
		// nothing (a payload not generated yet, say), so resolve the
		// patterns here; those that match nothing embed nothing.
		files = nil
		for _, p := range pkg.EmbedPatterns {
			matches, err := filepath.Glob(filepath.Join(pkg.Dir, strings.TrimPrefix(p, "all:")))
			if err != nil {
				return nil, fmt.Errorf("embed pattern %q: %w", p, err)
			}
			for _, m := range matches {
				rel, err := filepath.Rel(pkg.Dir, m)
				if err != nil {
					return nil, err
				}
				if err := embeddable(pkg.Dir, rel); err != nil {
					return nil, fmt.Errorf("embed pattern %q: %w", p, err)
				}
				files = append(files, rel)
			}
		}
	}
	var objs []string
	for _, f := range files {
		ok, err := isBPFObject(filepath.Join(pkg.Dir, f))
		if err != nil {
			return nil, err
		}
		if ok && !slices.Contains(objs, f) {
			objs = append(objs, f)
		}
	}
	slices.Sort(objs)
	return objs, nil
}

// embeddable refuses, as go:embed does, a file outside the package's
// directory tree, one reached through a symlink or in another module (a
// directory with a go.mod of its own), and anything but a regular file:
// discovery resolves patterns itself where go list gives up, and must not
// pick up an object the build could never embed.
func embeddable(dir, rel string) error {
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: outside the package directory, which go:embed refuses", rel)
	}
	p := dir
	parts := strings.Split(rel, string(filepath.Separator))
	for i, elem := range parts {
		p = filepath.Join(p, elem)
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		last := i == len(parts)-1
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s: a symlink, which go:embed refuses", filepath.Join(parts[:i+1]...))
		case last && !st.Mode().IsRegular():
			return fmt.Errorf("%s: not a regular file (%s), which go:embed refuses", rel, st.Mode().Type())
		case !last && st.IsDir():
			if _, err := os.Lstat(filepath.Join(p, "go.mod")); err == nil {
				return fmt.Errorf("%s: in another module (%s has a go.mod), which go:embed refuses", rel, filepath.Join(parts[:i+1]...))
			}
		}
	}
	return nil
}

// listedPackage is what discovery reads of `go list -json`'s description
// of a package; file names are relative to Dir.
type listedPackage struct {
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	EmbedPatterns  []string
	EmbedFiles     []string
	// Error is set when the package cannot be loaded entirely: an embed
	// pattern that matches nothing, say.
	Error *struct{ Err string }
}

// goList describes the package in dir as built for linux/goarch, or for
// Linux on the host's GOARCH if goarch is empty.
//
// It runs `go list -e -json`, the go command's documented interface,
// itself: golang.org/x/tools/go/packages, which runs the same command
// underneath, linked go/types into btfembed, making the binary larger and
// its start-up memory higher, whatever the subcommand (measured in
// docs/min-core-btf.md, "Speed").
func goList(ctx context.Context, dir, goarch string) (*listedPackage, error) {
	// -find: the package's own files are all that is needed, not its
	// dependencies.
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-find", "-json=Dir,GoFiles,CgoFiles,IgnoredGoFiles,EmbedPatterns,EmbedFiles,Error", ".")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GOOS=linux")
	if goarch != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+goarch)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := bytes.TrimSpace(stderr.Bytes()); len(msg) > 0 {
			return nil, fmt.Errorf("go list in %s: %w: %s", dir, err, msg)
		}
		return nil, fmt.Errorf("go list in %s: %w", dir, err)
	}
	var pkg listedPackage
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&pkg); err != nil {
		return nil, fmt.Errorf("go list in %s: read its output: %w", dir, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("go list in %s: more than one package", dir)
	}
	return &pkg, nil
}

// isBPFObject tells whether the file is an ELF object for the BPF machine.
func isBPFObject(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false, err
	}
	header, err := bpfobj.ReadHeader(path)
	if err != nil {
		return false, nil // shorter than an ELF header
	}
	_, err = bpfobj.ByteOrder(path, header)
	return err == nil, nil
}

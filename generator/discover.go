package generator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"
)

// linuxGOARCHes are the GOARCHes Go builds Linux programs for, as
// `go tool dist list` gives them: the builds a package's BPF objects may be
// embedded in.
var linuxGOARCHes = []string{"386", "amd64", "arm", "arm64", "loong64", "mips", "mips64", "mips64le", "mipsle", "ppc64", "ppc64le", "riscv64", "s390x"}

// ErrNoEmbeddedObjects is returned by EmbeddedObjects for a package that
// embeds no BPF object for any Linux GOARCH.
var ErrNoEmbeddedObjects = errors.New("the package embeds no BPF object")

// EmbeddedObjects finds the BPF objects that the Go package in dir embeds
// with //go:embed, for each Linux GOARCH that embeds any: bpf2go writes
// one Go file per target, whose build constraint names the GOARCHes the
// object serves, and embeds <stem>_<target>.o from it. The paths are
// relative to dir, sorted.
//
// The package is listed once for the host GOARCH to learn its files, and
// then, with golang.org/x/tools/go/packages, once for each GOARCH whose
// build constraints include a file that embeds something; only embedded
// files that are BPF ELF objects count.
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

// embeddingGOARCHes lists the Linux GOARCHes for which at least one Go file
// of the package that holds a //go:embed directive is built.
func embeddingGOARCHes(ctx context.Context, dir string) ([]string, error) {
	pkgs, err := packages.Load(&packages.Config{
		Context: ctx,
		Mode:    packages.NeedName | packages.NeedFiles,
		Dir:     dir,
		Env:     append(os.Environ(), "GOOS=linux"),
	}, ".")
	if err != nil {
		return nil, fmt.Errorf("list package in %s: %w", dir, err)
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("list package in %s: %d packages", dir, len(pkgs))
	}
	pkg := pkgs[0]
	var embedding []string
	for _, f := range append(slices.Clone(pkg.GoFiles), pkg.IgnoredFiles...) {
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if bytes.Contains(src, []byte("//go:embed ")) {
			embedding = append(embedding, filepath.Base(f))
		}
	}
	var goarches []string
	for _, goarch := range linuxGOARCHes {
		bc := build.Default
		bc.GOOS, bc.GOARCH = "linux", goarch
		for _, name := range embedding {
			ok, err := bc.MatchFile(pkg.Dir, name)
			if err != nil {
				return nil, err
			}
			if ok {
				goarches = append(goarches, goarch)
				break
			}
		}
	}
	return goarches, nil
}

// embeddedFor lists the BPF objects the package embeds when built for
// linux/goarch.
func embeddedFor(ctx context.Context, dir, goarch string) ([]string, error) {
	pkgs, err := packages.Load(&packages.Config{
		Context: ctx,
		Mode:    packages.NeedName | packages.NeedFiles | packages.NeedEmbedFiles | packages.NeedEmbedPatterns,
		Dir:     dir,
		Env:     append(os.Environ(), "GOOS=linux", "GOARCH="+goarch),
	}, ".")
	if err != nil {
		return nil, err
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("%d packages", len(pkgs))
	}
	pkg := pkgs[0]
	files := pkg.EmbedFiles
	if len(pkg.Errors) > 0 {
		// go list drops every embedded file when one pattern matches
		// nothing (a payload not generated yet, say), so resolve the
		// patterns here; those that match nothing embed nothing.
		files = nil
		for _, p := range pkg.EmbedPatterns {
			// go/packages gives the patterns as absolute paths.
			p = strings.TrimPrefix(p, "all:")
			if !filepath.IsAbs(p) {
				p = filepath.Join(pkg.Dir, p)
			}
			matches, err := filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("embed pattern %q: %w", p, err)
			}
			files = append(files, matches...)
		}
	}
	var objs []string
	for _, f := range files {
		ok, err := isBPFObject(f)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		rel, err := filepath.Rel(pkg.Dir, f)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(objs, rel) {
			objs = append(objs, rel)
		}
	}
	slices.Sort(objs)
	return objs, nil
}

// isBPFObject tells whether the file is an ELF object for the BPF machine.
func isBPFObject(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false, err
	}
	header, err := readELFHeader(path)
	if err != nil {
		return false, nil // shorter than an ELF header
	}
	_, err = bpfByteOrder(path, header)
	return err == nil, nil
}

package corpus

import (
	"cmp"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// modulesDirSuffix names the directory holding a kernel's module BTF,
// beside the kernel file: <release>.modules/. BTFHub tools look for
// *.btf.tar.xz files and pass it over.
const modulesDirSuffix = ".modules"

type entryKind int

const (
	kindBTFHub entryKind = iota // <release>.btf.tar.xz
	kindRaw                     // <release>.btf[.xz|.zst|.gz]
	kindImage                   // vmlinux, vmlinux-<release>, vmlinuz-<release>
)

// entry is one kernel of a corpus as the directory walk finds it, before
// any file is read.
type entry struct {
	path       string
	kind       entryKind
	key        kernelkey.Key // what the path tells
	modulesDir string        // "" when the kernel has no modules directory
	err        error         // a problem found by the walk itself
}

// kernelFile classifies a file name and returns the release it names.
func kernelFile(name string) (entryKind, string, bool) {
	if rel, ok := strings.CutSuffix(name, btfhubSuffix); ok && rel != "" {
		return kindBTFHub, rel, true
	}
	for _, s := range []string{".btf", ".btf.xz", ".btf.zst", ".btf.gz"} {
		if rel, ok := strings.CutSuffix(name, s); ok && rel != "" {
			return kindRaw, rel, true
		}
	}
	if name == "vmlinux" {
		return kindImage, "", true
	}
	for _, p := range []string{"vmlinux-", "vmlinuz-"} {
		if rel, ok := strings.CutPrefix(name, p); ok && rel != "" {
			return kindImage, rel, true
		}
	}
	return 0, "", false
}

// pathKey reads a key from the path of a corpus file of the given kind,
// named for release. Directory names are a weak witness (a vmlinux under
// .../corpus/nobtf/x86_64/ was once keyed distro "corpus", version
// "nobtf"), so they are read only where the path is the BTFHub layout,
// whose files are raw BTF that tells nothing of its kernel:
//
//   - the file is BTF by its name (<release>.btf.tar.xz, <release>.btf,
//     .btf.xz, .btf.zst, .btf.gz) and its directory is an architecture
//     name: that is the arch;
//   - and the two directories above are a version as distributions write
//     VERSION_ID (starting with a digit: 12, 22.04, 15.3, 2023) and a
//     distribution ID (os-release(5): lower-case letters, digits, ".",
//     "_", "-"), or "unknown" as import writes either when nothing told
//     it: those are the version and distro.
//
// A kernel image (vmlinux, vmlinuz-<release>) tells its own key, from its
// banner and ELF machine, so its directories are never read.
func pathKey(file string, kind entryKind, release string) kernelkey.Key {
	k := kernelkey.Key{Release: release}
	if kind == kindImage {
		return k
	}
	dirs := strings.Split(filepath.ToSlash(filepath.Dir(filepath.Clean(file))), "/")
	n := len(dirs)
	arch, ok := kernelkey.NormalizeArch(dirs[n-1])
	if !ok {
		return k
	}
	k.Arch = arch
	if n >= 3 && isLayoutVersion(dirs[n-2]) && isLayoutDistro(dirs[n-3]) {
		k.Version, k.Distro = dirs[n-2], dirs[n-3]
		if k.Version == "unknown" {
			k.Version = ""
		}
		if k.Distro == "unknown" {
			k.Distro = ""
		}
	}
	return k
}

// isLayoutVersion tells whether a directory name can be the <version> of
// the layout: "unknown", or a VERSION_ID that starts with a digit.
func isLayoutVersion(s string) bool {
	return s == "unknown" || s != "" && s[0] >= '0' && s[0] <= '9'
}

// isLayoutDistro tells whether a directory name can be the <distro> of
// the layout: an os-release(5) ID, which starts with a letter here.
func isLayoutDistro(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// walkCorpus lists the kernels under the roots, sorted by key then path,
// each with its modules directory.
func walkCorpus(roots []string) []entry {
	var entries []entry
	type dirRelease struct{ dir, release string }
	modDirs := map[dirRelease]string{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				entries = append(entries, entry{path: p, err: err})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			name := d.Name()
			if p != root && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if rel, ok := strings.CutSuffix(name, modulesDirSuffix); ok && rel != "" {
					modDirs[dirRelease{filepath.Dir(p), rel}] = p
					return fs.SkipDir
				}
				return nil
			}
			kind, rel, ok := kernelFile(name)
			if !ok {
				return nil
			}
			entries = append(entries, entry{path: p, kind: kind, key: pathKey(p, kind, rel)})
			return nil
		})
		if err != nil {
			entries = append(entries, entry{path: root, err: err})
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.err != nil {
			continue
		}
		dr := dirRelease{filepath.Dir(e.path), e.key.Release}
		if md, ok := modDirs[dr]; ok {
			e.modulesDir = md
			delete(modDirs, dr)
		}
	}
	// A modules directory with no kernel beside it belongs to the kernel of
	// the same key in another root, so modules can live in a root of their
	// own.
	byKey := map[kernelkey.Key]int{}
	for i, e := range entries {
		if e.err == nil && e.modulesDir == "" && e.key.Arch != "" && e.key.Release != "" {
			byKey[e.key] = i
		}
	}
	for dr, md := range modDirs {
		key := pathKey(filepath.Join(dr.dir, dr.release), kindBTFHub, dr.release)
		if i, ok := byKey[key]; ok && key.Arch != "" {
			entries[i].modulesDir = md
			delete(byKey, key)
			continue
		}
		entries = append(entries, entry{
			path: md,
			key:  key,
			err:  fmt.Errorf("%w: no kernel %s beside it or in another root", errNoBase, key),
		})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(a.key.Compare(b.key), strings.Compare(a.path, b.path))
	})
	return entries
}

package corpus

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/kernelkey"
)

// KernelPath is where a kernel's file lives in a corpus rooted at dir:
// <dir>/<distro>/<version>/<arch>/<release>.btf.tar.xz.
func KernelPath(dir string, k kernelkey.Key) string {
	return filepath.Join(dir, keyDir(k), k.Release+btfhubSuffix)
}

// ModulesPath is the directory of a kernel's module BTF in a corpus rooted
// at dir: <dir>/<distro>/<version>/<arch>/<release>.modules.
func ModulesPath(dir string, k kernelkey.Key) string {
	return filepath.Join(dir, keyDir(k), k.Release+modulesDirSuffix)
}

// keyDir is the directory of a kernel's files, relative to the corpus
// root: <distro>/<version>/<arch>, "unknown" for an empty distro or
// version.
func keyDir(k kernelkey.Key) string {
	return filepath.Join(orUnknown(k.Distro), orUnknown(k.Version), k.Arch)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// writeKernel writes a kernel into the corpus rooted at dir, in the
// BTFHub-archive layout, with its modules as <name>.btf.zst files in the
// modules directory, and returns the kernel file's path. The kernel file
// and the modules directory are written to temporary names and renamed
// together, so a failure leaves no partial file and the previous version
// of the kernel is replaced whole.
func writeKernel(dir string, k *Kernel) (string, error) {
	if k.Key.Arch == "" || k.Key.Release == "" {
		return "", fmt.Errorf("write kernel %s: %w", k.Key, errIncompleteKey)
	}
	if err := k.checkNames(); err != nil {
		return "", fmt.Errorf("write kernel %s: %w", k.Key, err)
	}
	file, mods := KernelPath(dir, k.Key), ModulesPath(dir, k.Key)
	for _, p := range []string{file, mods} {
		if err := within(dir, p); err != nil {
			return "", fmt.Errorf("write kernel %s: %w", k.Key, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	var out atomicfile.Set
	defer out.Abort()
	if len(k.Modules) > 0 {
		err := out.AddDir(mods, func(tmp string) error { return writeModules(tmp, k.Modules) })
		if err != nil {
			return "", err
		}
	}
	err := out.Add(file, func(w io.Writer) error {
		return writeBTFHub(w, k.Key.Release, k.VMLinux)
	})
	if err != nil {
		return "", err
	}
	if err := out.Commit(); err != nil {
		return "", err
	}
	return file, nil
}

// within checks that path stays under root once both are cleaned: the
// last guard against a path element that walks out of the corpus.
func within(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s is outside the corpus root %s", path, root)
	}
	return nil
}

var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedBestCompression),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
})

// writeModules writes module BTF, zstd-compressed, into the directory dir.
func writeModules(dir string, mods []Module) error {
	enc, err := zstdEncoder()
	if err != nil {
		return err
	}
	errs := make([]error, len(mods))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, m := range mods {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			b := enc.EncodeAll(m.BTF, nil)
			errs[i] = os.WriteFile(filepath.Join(dir, m.Name+".btf.zst"), b, 0o644)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

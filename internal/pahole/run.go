package pahole

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/btfembed/btfembed/internal/atomicfile"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/regfile"
)

// EnvVar names the pahole to run instead of the one on PATH, as PAHOLE
// does for the kernel's Makefile.
const EnvVar = "PAHOLE"

// Sentinel errors of Find.
var (
	// ErrNotFound: no pahole to run.
	ErrNotFound = errors.New("pahole not found: making BTF from DWARF needs it (Debian package pahole, also on Ubuntu; dwarves on Fedora and RHEL)")
	// ErrTooOld: pahole is older than MinVersion.
	ErrTooOld = errors.New("pahole too old")
)

// Tool is a pahole found by Find.
type Tool struct {
	Path    string
	Version Version
}

// Find locates pahole ($PAHOLE, else pahole on PATH) and checks that it is
// at least MinVersion.
func Find(ctx context.Context) (*Tool, error) {
	name := os.Getenv(EnvVar)
	if name == "" {
		name = "pahole"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNotFound, err)
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s --version: %v", ErrNotFound, path, err)
	}
	v, err := ParseVersion(string(out))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if v.less(MinVersion) {
		return nil, fmt.Errorf("%w: %s is %v, making BTF from DWARF needs %v or newer (Debian package pahole from bookworm on; dwarves on Fedora and RHEL)", ErrTooOld, path, v, MinVersion)
	}
	return &Tool{Path: path, Version: v}, nil
}

// Job is one pahole run.
type Job struct {
	// ELF is the file whose DWARF is encoded: a vmlinux or a module.
	ELF string
	// Kernel is the kernel's version, for Flags.
	Kernel KernelVersion
	// BaseFile is, for a module, the vmlinux's raw BTF (a file pahole's
	// --btf_base reads), and Base the same BTF parsed, to check the
	// module's split BTF against. Both are empty for a vmlinux.
	BaseFile string
	Base     *rawbtf.Spec
}

// flags are the run's Flags.
func (j Job) flags(v Version) []string { return Flags(j.Kernel, v, j.BaseFile != "") }

// Encode runs pahole on j.ELF and returns the raw BTF it makes, standalone
// for a vmlinux, split over j.Base for a module, checked to parse and to
// hold at least one type: BTF without types (a file without DWARF) is an
// error wrapping extract.ErrNoBTF. The run waits for its memory estimate
// (footprint) to fit the memory budget shared with the readers of package
// extract. pahole killed at its time or memory limit (the package doc,
// Limits) is an error wrapping ErrTimeLimit or ErrMemoryLimit that names
// j.ELF, the limit and how it follows from the input.
func (t *Tool) Encode(ctx context.Context, j Job) ([]byte, error) {
	// A regular file only: pahole would wait on a FIFO until its time limit.
	f, fi, err := regfile.Open(j.ELF, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	size := inputSize(f, fi.Size())
	f.Close()
	return t.encode(ctx, j, size, limitsFor(size, paholeThreads(j.flags(t.Version))))
}

// encode is Encode with the input's size (inputSize) and the run's limits.
func (t *Tool) encode(ctx context.Context, j Job, size int64, lim limits) ([]byte, error) {
	// The file is given absolute, after "--": pahole parses its arguments
	// with argp, which like getopt takes "--" as the end of the options,
	// so a file named "--help" or "-V" is a file; and a path that starts
	// with "/" cannot be taken for an option by any parser, even a
	// $PAHOLE wrapper that drops the "--".
	elfPath, err := filepath.Abs(j.ELF)
	if err != nil {
		return nil, fmt.Errorf("pahole: %w", err)
	}
	release, err := extract.Reserve(footprint(size))
	if err != nil {
		return nil, fmt.Errorf("pahole: %w", err)
	}
	defer release()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, remove, err := atomicfile.TempDir("", "btfembed-pahole")
	if err != nil {
		return nil, fmt.Errorf("pahole: %w", err)
	}
	defer remove()
	out := filepath.Join(dir, "out.btf")
	args := append(j.flags(t.Version), "--btf_encode_detached="+out)
	if j.BaseFile != "" {
		args = append(args, "--btf_base="+j.BaseFile)
	}
	args = append(args, "--", elfPath)
	cmd := exec.Command(t.Path, args...)
	var log tail
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := run(ctx, cmd, elfPath, lim); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrTimeLimit) || errors.Is(err, ErrMemoryLimit) {
			return nil, fmt.Errorf("%w%s", err, log.text())
		}
		return nil, fmt.Errorf("pahole %s: %w%s", strings.Join(args, " "), err, log.text())
	}
	data, err := regfile.ReadFile(out, extract.MaxBTF)
	if errors.Is(err, fs.ErrNotExist) {
		// pahole exits 0 without writing when the DWARF holds no type.
		return nil, fmt.Errorf("%w: pahole made no BTF from %s (its DWARF has no types?)%s", extract.ErrNoBTF, j.ELF, log.text())
	}
	if err != nil {
		return nil, fmt.Errorf("BTF pahole made: %w", err)
	}
	spec, err := rawbtf.Parse(data, j.Base)
	if err != nil {
		return nil, fmt.Errorf("BTF pahole made: %w", err)
	}
	if spec.NextID() == spec.FirstID() {
		return nil, fmt.Errorf("%w: pahole made BTF without types (the file has no DWARF?)%s", extract.ErrNoBTF, log.text())
	}
	return data, nil
}

// footprint estimates pahole's peak memory for an input of size bytes,
// from the figures in the package doc: about 14 MiB plus twice the input
// for small ones, 141 MiB plus half the input for a vmlinux.
func footprint(size int64) int64 {
	return min(16<<20+2*size, 141<<20+size/2)
}

// tail keeps the last bytes pahole printed, for errors.
type tail struct{ b []byte }

const tailMax = 2 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tail) text() string {
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return ""
	}
	return ": " + s
}

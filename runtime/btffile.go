package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/regfile"
)

// A BTF file the user supplies comes ahead of the kernel's own BTF and
// the payload, as TRACEE_BTF_FILE does for tracee, --btf for tetragon and
// btf_custom_path for libbpf: an operator points the agent at BTF for a
// kernel the payload lacks, or whose own BTF is wrong, without rebuilding
// the agent. It is input like the payload, so it is read and checked as
// the payload's BTF is; unlike the payload's, it may be a whole kernel's
// BTF, which costs what cilium/ebpf's full decode costs (about 130 ms and
// 11 times the file's size in memory for a 4.3 MB vmlinux BTF).

// BTFFileEnv is the environment variable that names a BTF file for Select
// when SelectOptions.BTFFile is empty and SelectOptions.ForceEmbedded is
// not set.
const BTFFileEnv = "BTFEMBED_BTF_FILE"

// maxBTFFile bounds the size of a BTF file the user supplies: a kernel's
// vmlinux BTF is under 16 MiB today.
const maxBTFFile = 32 << 20

// fileBudget bounds the memory a BTF file the user supplies may take once
// cilium/ebpf has loaded it and decoded every type, computed before
// anything is allocated (payload.CheckBTF): a kernel's BTF takes about 11
// times its size, so any kernel's BTF that maxBTFFile admits fits, and a
// crafted file that would take more (many members naming one long string)
// is refused.
const fileBudget = 512 << 20

// btfFile returns the path of the BTF file Select uses, or "" for none:
// opts.BTFFile, else $BTFEMBED_BTF_FILE. ForceEmbedded asks for the
// embedded BTF, so it ignores the variable, and it contradicts BTFFile.
func btfFile(opts *SelectOptions) (string, error) {
	switch {
	case opts.BTFFile != "" && opts.ForceEmbedded:
		return "", fmt.Errorf("both BTFFile and ForceEmbedded are set: BTF file %s or the embedded BTF?", opts.BTFFile)
	case opts.BTFFile != "":
		return opts.BTFFile, nil
	case opts.ForceEmbedded:
		return "", nil
	}
	return os.Getenv(BTFFileEnv), nil
}

// fileSelection selects the BTF file at path for the running kernel h,
// with no fallback: a file that cannot be used is an error naming it.
// The path is the agent's, not under HostRoot. Modules come from the
// embedded entry that matches h, relocated onto the file's BTF as onto
// the kernel's own; the kernel's module BTF is split BTF over the
// kernel's vmlinux BTF, not over the file, so it is not used. There is no
// prediction: the entry's verdicts were computed from the embedded
// kernel's BTF, and an operator supplies a file where that BTF is not
// this kernel's.
func (a *Assets) fileSelection(h host, path string) (*Selection, error) {
	b, spec, err := loadBTFFile(path)
	if err != nil {
		return nil, err
	}
	var sel *Selection
	err = a.retry(func() error {
		sel = &Selection{Source: SourceFile, Key: h.key, File: path, Spec: spec, assets: a}
		e, err := a.hostEntry(h)
		if err != nil || e == nil {
			return err
		}
		return a.embeddedModules(e, sel, path, func() (*payload.BTF, error) { return b, nil })
	})
	if err != nil {
		return nil, fmt.Errorf("BTF file %s: %w", path, err)
	}
	return sel, nil
}

// loadBTFFile reads the BTF file at path, checks it as CheckBTF checks the
// payload's BTF, and loads it with cilium/ebpf, every type decoded, under
// a budget of its own (fileBudget). It returns the checked BTF too, for
// relocating modules onto it.
func loadBTFFile(path string) (*payload.BTF, *btf.Spec, error) {
	// Not through a symbolic link: what is read is the file the operator
	// named, as with the kernel's /sys/kernel/btf files.
	raw, err := regfile.ReadFileNoFollow(path, maxBTFFile)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, fmt.Errorf("BTF file %s: a symbolic link: name the file itself", path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("BTF file: %w", err)
	}
	if what := notRawBTF(raw); what != "" {
		return nil, nil, fmt.Errorf("BTF file %s: %s", path, what)
	}
	// The budget is this call's alone: nothing is given back to it.
	bud := payload.NewBudget(fileBudget)
	b, err := payload.CheckBTF(raw, nil, false, bud)
	if err != nil {
		return nil, nil, fileError(path, err)
	}
	c := &charges{bud: bud}
	spec, err := loadSpec(raw, nil, b.Cost, c, "vmlinux")
	if err == nil {
		err = decode(spec, b, c, "vmlinux")
	}
	if err != nil {
		return nil, nil, fileError(path, err)
	}
	return b, spec, nil
}

// notRawBTF says what raw is when it starts as what operators give for
// BTF by mistake: a kernel's ELF vmlinux, or a compressed file such as a
// BTFHub archive (.btf.tar.xz). "" means it may be raw BTF.
func notRawBTF(raw []byte) string {
	for _, m := range []struct{ magic, what string }{
		{"\x7fELF", "an ELF file, not raw BTF: give its .BTF section (objcopy -O binary --only-section=.BTF vmlinux vmlinux.btf)"},
		{"\xfd7zXZ\x00", "xz-compressed, not raw BTF: decompress it (a BTFHub archive: tar -xJf it)"},
		{"\x1f\x8b", "gzip-compressed, not raw BTF: decompress it"},
		{"\x28\xb5\x2f\xfd", "zstd-compressed, not raw BTF: decompress it"},
	} {
		if bytes.HasPrefix(raw, []byte(m.magic)) {
			return m.what
		}
	}
	return ""
}

// fileError is err, from checking or loading the BTF file at path, as an
// error about that file. Past the file's budget, the error is the
// budget's, which wraps ErrCorrupt and ErrOverBudget: neither is true of
// the agent's payload here, so it is not wrapped, nor retried.
func fileError(path string, err error) error {
	if errors.Is(err, payload.ErrOverBudget) {
		return fmt.Errorf("BTF file %s: not a kernel's BTF: a BTF file may take %d MiB decoded, a kernel's takes about 11 times its size", path, fileBudget>>20)
	}
	return fmt.Errorf("BTF file %s: %w", path, err)
}

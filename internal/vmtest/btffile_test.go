package vmtest_test

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btfembed/btfembed/generator"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vmtest"
	btfruntime "github.com/btfembed/btfembed/runtime"
)

// TestFieldBTFFile proves the operator's way out, as an agent meets it:
// the shared corpus's kernel built without BTF (nobtf, 6.1.176), booted
// with an agent whose payload does not embed it, and its BTF, made from
// its DWARF as BTFHub's archive would hand it to an operator, in a file
// that BTFEMBED_BTF_FILE names. The variable is set on the kernel command
// line, which the kernel passes to /init's environment, and /init to
// execsnoop's, as a unit file or a container's environment would. The
// selection must be the file's, and execsnoop must report the guest's
// exec with the right pid, parent pid and comm, which it reads from
// task_struct through CO-RE on the file's BTF. Without the variable the
// same boot must say the kernel is not supported: the file served it,
// not the payload.
func TestFieldBTFFile(t *testing.T) {
	vmtest.Require(t, "x86_64")
	dir := kerneltest.SharedCorpus(t)
	fx, err := fieldFixture(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fx.nobtfErr != nil {
		t.Skip(fx.nobtfErr)
	}
	btf, err := kerneltest.UnpackArchive(fx.nobtfEntry)
	if err != nil {
		t.Fatal(err)
	}
	// A payload of testdata's 6.12 kernels only: not the booted one.
	res, err := generator.Generate(context.Background(), &generator.Args{
		Objects: []string{repoPath("examples", "execsnoop", "bpf_x86_bpfel.o")},
		Corpus:  []string{filepath.Join(kerneltest.Dir(), "btfhub")}, Arch: []string{"x86_64"}, Kernels: "6.12.*", Strict: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range res.Report.Kernels {
		if k.Release == nobtfKey.Release {
			t.Fatalf("the payload embeds %s", k.Release)
		}
	}
	payload, err := res.Payload()
	if err != nil {
		t.Fatal(err)
	}
	init, execsnoop, err := fx.build("x86_64", payload)
	if err != nil {
		t.Fatal(err)
	}
	const btfFile = "etc/btf/vmlinux-6.1.176.btf"
	m := vmtest.Machine{
		Arch:   "x86_64",
		Kernel: filepath.Join(dir, nobtfDir, "vmlinuz-"+nobtfKey.Release),
		Initramfs: []vmtest.File{
			{Path: "init", Mode: 0o755, Data: init},
			{Path: vmtest.FieldExecChild, Mode: os.ModeSymlink | 0o777, Data: []byte("/init")},
			{Path: vmtest.FieldExecsnoopBin, Mode: 0o755, Data: execsnoop},
			{Path: vmtest.FieldOSRelease, Mode: 0o644, Data: []byte(osRelease(nobtfKey.Distro, nobtfKey.Version))},
			{Path: vmtest.FieldPayload, Mode: 0o644, Data: payload},
			{Path: btfFile, Mode: 0o644, Data: btf},
			fx.archObjects["x86_64"],
		},
		Timeout: 4 * time.Minute,
	}
	without := m
	withFile := m
	withFile.Cmdline = []string{btfruntime.BTFFileEnv + "=/" + btfFile}
	for _, tc := range []struct {
		name string
		m    *vmtest.Machine
	}{{"without the file", &without}, {"with the file", &withFile}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := vmtest.Run(t.Context(), tc.m)
			if err != nil {
				t.Fatal(err)
			}
			r, err := decodeRun(b)
			if err != nil {
				t.Fatal(err)
			}
			if r.host.KernelBTF || r.host.Release != nobtfKey.Release {
				t.Fatalf("booted %+v, want %s without BTF", r.host, nobtfKey.Release)
			}
			if tc.m == &without {
				if !strings.Contains(r.sel.Error, "kernel not supported") {
					t.Errorf("selected %+v, want the kernel not supported", r.sel)
				}
				return
			}
			if r.sel.Error != "" || r.sel.Source != "file" || r.sel.Release != nobtfKey.Release {
				t.Fatalf("selected %+v, want the file's BTF for %s", r.sel, nobtfKey.Release)
			}
			e := r.execsnoop
			if e.Error != "" || !strings.Contains(e.Banner, "BTF from file") ||
				e.Pid != e.WantPid || e.Ppid != e.WantPpid || e.Comm != path.Base(vmtest.FieldExecChild) {
				t.Errorf("execsnoop: %+v, want BTF from file and comm %s", e, path.Base(vmtest.FieldExecChild))
			}
			t.Logf("execsnoop: %s", e.Banner)
		})
	}
}

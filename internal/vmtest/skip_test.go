package vmtest_test

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/vmtest"
)

// TestExecsnoopSkips boots a Debian 12 6.1 kernel, which lacks the cgroup
// storage map type (6.2) that the example's optional count_exec needs, and
// runs examples/execsnoop there with fieldinit as /init (no objects of
// its own to load, the example's own payload). With the kernel's BTF
// hidden, execsnoop selects the embedded entry, whose verdicts say
// count_exec fails for its map type: it skips count_exec, says so, and
// reports the guest's exec. With the BTF visible the kernel's own BTF is
// used with the predictions of its embedded entry (the same build's), and
// execsnoop skips count_exec the same way.
func TestExecsnoopSkips(t *testing.T) {
	const release, arch = "6.1.0-47-amd64", "x86_64"
	vmtest.Require(t, arch)
	dir := kerneltest.SharedCorpus(t)
	payload, err := os.ReadFile(repoPath("examples", "execsnoop", "kernelbtf_amd64.btfembed"))
	if err != nil {
		t.Fatal(err)
	}
	init, execsnoop, err := (&fixture{}).build(arch, payload)
	if err != nil {
		t.Fatal(err)
	}
	hidden, visible := bootBoth(t, vmtest.Machine{
		Arch:   arch,
		Kernel: filepath.Join(dir, "images", "vmlinuz-"+release),
		Initramfs: []vmtest.File{
			{Path: "init", Mode: 0o755, Data: init},
			{Path: vmtest.FieldExecChild, Mode: os.ModeSymlink | 0o777, Data: []byte("/init")},
			{Path: vmtest.FieldExecsnoopBin, Mode: 0o755, Data: execsnoop},
			{Path: vmtest.FieldOSRelease, Mode: 0o644, Data: []byte(osRelease("debian", "12"))},
			{Path: vmtest.FieldPayload, Mode: 0o644, Data: payload},
		},
		Timeout: 4 * time.Minute,
	})
	for _, tt := range []struct {
		which string
		boot  *vmtest.Boot
		// want is what the banner must say about count_exec.
		want string
	}{
		{"embedded", hidden, "skipped bpf_x86_bpfel.o count_exec: fails (map_type: map execs_per_cgroup: map type CgroupStorage (32) is not in this kernel)"},
		{"kernel", visible, "skipped bpf_x86_bpfel.o count_exec: fails (map_type: map execs_per_cgroup: map type CgroupStorage (32) is not in this kernel)"},
	} {
		r, err := decodeRun(tt.boot)
		if err != nil {
			t.Fatalf("BTF from %s: %v\n%s", tt.which, err, tt.boot.Console)
		}
		e := r.execsnoop
		if r.host.Release != release || e.Error != "" || !strings.Contains(e.Banner, "BTF from "+tt.which) || !strings.Contains(e.Banner, tt.want) {
			t.Errorf("BTF from %s on %s: execsnoop %+v, want its banner to say %q", tt.which, r.host.Release, e, tt.want)
		}
		if e.Pid != e.WantPid || e.Ppid != e.WantPpid || e.Comm != path.Base(vmtest.FieldExecChild) {
			t.Errorf("BTF from %s: event pid %d ppid %d comm %s, want %d %d %s", tt.which, e.Pid, e.Ppid, e.Comm, e.WantPid, e.WantPpid, path.Base(vmtest.FieldExecChild))
		}
		t.Logf("BTF from %s: %s", tt.which, e.Banner)
	}
}

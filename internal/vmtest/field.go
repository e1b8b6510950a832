package vmtest

// The field test (field_test.go, guest fieldinit) boots a kernel as
// btfembed's users deploy it: the agent's payload and objects in the
// initramfs, the kernel's BTF visible or hidden. These are its initramfs
// layout, command line and records, shared by both sides.

// Files of the field test's initramfs.
const (
	FieldPayload      = "btfembed/payload.btfembed" // the generated payload
	FieldObjects      = "btfembed/objects"          // BPF objects, *.o
	FieldModules      = "btfembed/modules"          // NN-<name>.ko, loaded in name order
	FieldExecsnoopBin = "bin/execsnoop"             // examples/execsnoop, built for the guest
	FieldOSRelease    = "etc/os-release"
	// FieldExecChild is the program the guest execs for execsnoop to see:
	// a link to /init, which exits at once when started under this name.
	FieldExecChild = "bin/btfembed-e2e"
)

// FieldHideBTF is the kernel command-line word that makes the guest mount a
// tmpfs over /sys/kernel/btf before anything reads it: a kernel without BTF.
const FieldHideBTF = "btfembed.hide=1"

// FieldAllowFamily is the kernel command-line word that makes the guest
// select with SelectOptions.AllowFamily and run execsnoop with -family,
// as an agent that accepts a stable family's BTF for a newer build does.
const FieldAllowFamily = "btfembed.family=1"

// Record kinds of the field test, besides KindProgramLoad.
const (
	KindFieldHost      = "host"
	KindFieldModule    = "module"
	KindFieldSelect    = "select"
	KindFieldExecsnoop = "execsnoop"
)

// FieldHost describes the booted kernel.
type FieldHost struct {
	Release string `json:"release"` // uname -r
	Machine string `json:"machine"` // uname -m
	// KernelBTF says whether /sys/kernel/btf/vmlinux existed at boot,
	// before the guest hid it.
	KernelBTF bool `json:"kernel_btf"`
	Hidden    bool `json:"hidden"`
}

// FieldModule is one finit_module call.
type FieldModule struct {
	Name  string `json:"name"`
	Error string `json:"error,omitempty"`
}

// FieldSelect is what runtime.Select(nil) chose.
type FieldSelect struct {
	Source  string   `json:"source"` // "kernel", "embedded", "family" or "file"
	Key     string   `json:"key"`
	Release string   `json:"release"`
	Distro  string   `json:"distro"`
	Version string   `json:"version"`
	Modules []string `json:"modules,omitempty"` // module BTF handed to cilium/ebpf
	// Family is the selection's FamilySelection.Reason, for a build the
	// payload does not embed served by its family's (source "family").
	Family string `json:"family,omitempty"`
	Error  string `json:"error,omitempty"`
}

// FieldExecsnoop is the run of examples/execsnoop: the BTF it reported
// using, and the event it printed for the guest's exec of FieldExecChild,
// next to the pid and parent pid the guest knows that exec had.
type FieldExecsnoop struct {
	Banner   string `json:"banner"` // execsnoop's start-up line
	Pid      int    `json:"pid"`
	Ppid     int    `json:"ppid"`
	Comm     string `json:"comm"`
	Filename string `json:"filename"`
	WantPid  int    `json:"want_pid"`
	WantPpid int    `json:"want_ppid"`
	Error    string `json:"error,omitempty"`
}

// FieldResult is one kernel's verdicts from its boots, as
// `go test ./internal/vmtest -run TestField -field.out DIR` writes them to
// DIR/<name>.json (the test's name for the kernel, / as -:
// deb-<release>.json for the package's kernel, nobtf-<release>.json), for
// comparison with predictions.
type FieldResult struct {
	Kernel    string        `json:"kernel"` // the test's name for it
	Arch      string        `json:"arch"`
	Release   string        `json:"release"`
	KernelBTF []ProgramLoad `json:"kernel_btf"` // BTF visible; none for a kernel without BTF
	Embedded  []ProgramLoad `json:"embedded"`   // BTF hidden or absent, embedded BTF selected
}

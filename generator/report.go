package generator

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/btfembed/btfembed/internal/coremin"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/safetext"
	"github.com/btfembed/btfembed/internal/vocab"
)

// errVerify is wrapped by the error of a kernel whose minimized BTF does
// not relocate the objects like its full BTF does.
var errVerify = errors.New("minimized BTF fails verification")

// Report is what a generate run found: the coverage of every kernel and
// whether each program loads there (the load prediction), the
// kernels it skipped and the size of what it embedded. It is written as
// JSON with -report and as a table on the terminal.
type Report struct {
	Objects []string       `json:"objects"`
	Kernels []KernelReport `json:"kernels"`
	Skipped []Skipped      `json:"skipped,omitempty"`
	// Families are the kernel families of the kernels, and whether each
	// is stable for the objects (families.go).
	Families []FamilyReport `json:"families,omitempty"`
	// Blobs counts distinct minimized vmlinux BTF blobs: kernels whose
	// relocations need the same types share one.
	Blobs int `json:"blobs"`
	// PayloadBytes is the size of the payloads made of the run, which
	// their writer sets: Generate leaves encoding to it (Result.Payload),
	// and the go:generate mode writes one payload per GOARCH.
	PayloadBytes int           `json:"payload_bytes"`
	Duration     time.Duration `json:"-"`
	// CachedResults counts kernels whose result came from the cache (in
	// verify mode: whose cached result the one computed again
	// confirmed), CachedBTF kernels whose BTF did (and were minimized
	// and verified again). Neither is in the JSON, which is the same
	// with a cache or without.
	CachedResults int `json:"-"`
	CachedBTF     int `json:"-"`
}

// KernelReport is one kernel's coverage and load prediction.
type KernelReport struct {
	Arch    string `json:"arch"`
	Release string `json:"release"`
	Distro  string `json:"distro,omitempty"`
	Version string `json:"version,omitempty"`
	Path    string `json:"path"`
	// Objects are the objects checked against this kernel and embedded
	// for it: those that pair with its architecture.
	Objects []string `json:"objects"`
	// Types and Bytes describe the minimized vmlinux BTF.
	Types   int            `json:"types"`
	Bytes   int            `json:"bytes"`
	Modules []ModuleReport `json:"modules,omitempty"`
	// Unresolved lists the relocations that do not resolve on this kernel,
	// with Status "absent" (an existence check is false), "poisoned" (the
	// instruction is replaced by one that fails verification if reached),
	// "ambiguous" or "failed" (cilium/ebpf refuses to load the program).
	Unresolved []RelocationReport `json:"unresolved,omitempty"`
	// Programs predicts, for every program of every object, whether it
	// loads on this kernel.
	Programs []ProgramReport `json:"programs"`
	// KernelTypeIDs lists relocations that ask for the running kernel's
	// own type IDs (bpf_core_type_id_kernel): no embedded BTF can give
	// those, so these programs need the kernel's BTF.
	KernelTypeIDs []RelocationReport `json:"kernel_type_ids,omitempty"`
	// Fixups digests the fixups cilium/ebpf gives every relocation of
	// the objects on this kernel (coremin.Answers.FixupDigest): kernels
	// with one digest relocate the objects alike. Families compares its
	// members' digests.
	Fixups string `json:"fixups"`
}

// ModuleReport is the embedded BTF of one kernel module.
type ModuleReport struct {
	Name  string `json:"name"`
	Types int    `json:"types"`
	Bytes int    `json:"bytes"` // distilled base plus split BTF
}

// RelocationReport is one row of a KernelReport: a CO-RE relocation of an
// object, and what it comes to on the kernel.
type RelocationReport struct {
	Object  string `json:"object"`
	Section string `json:"section"`
	// Function is the function holding the instruction: the program's
	// name, or a subprogram's.
	Function string `json:"function,omitempty"`
	InsnOff  uint32 `json:"insn_off"`
	// Field names the relocation as the load prediction's reasons do
	// ("byte_off task_struct.mm_cid").
	Field  string `json:"field,omitempty"`
	Kind   string `json:"kind"`
	Type   string `json:"type"`
	Access string `json:"access"`
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Skipped is a corpus entry that could not be used.
type Skipped struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// objectRows are one object's report rows on one kernel.
type objectRows struct {
	Unresolved    []RelocationReport
	KernelTypeIDs []RelocationReport
	Programs      []ProgramReport
}

// rows lists, object by object, the relocations that do not resolve and
// those that need the kernel's own type IDs; predict adds the programs.
func (o *objects) rows(res *coremin.Result) []objectRows {
	rows := make([]objectRows, len(res.Objects))
	for i, obj := range res.Objects {
		for j := range obj.Sites {
			rows[i].add(o.names[i], obj, j, newCachedOutcome(res, i, j))
		}
	}
	return rows
}

// add appends the rows, if any, of site j of obj, named object, whose
// outcome is c: process and fromCache share it.
func (rows *objectRows) add(object string, obj *coremin.Object, j int, c cachedOutcome) {
	if !c.Unresolved && !c.KernelTypeID {
		return // most sites: naming them was 2 % of a run with the big test object
	}
	s := obj.Sites[j]
	r := &obj.Relocations[s.Relocation]
	rel := RelocationReport{
		Object: object, Section: obj.Functions[s.Function].Section, Function: obj.Functions[s.Function].Name, InsnOff: s.InsnOff,
		Field: obj.Describe(r), Kind: r.Kind.String(), Type: r.TypeName, Access: r.Access,
	}
	if c.Unresolved {
		u := rel
		u.Status, u.Reason = c.Status, c.Reason
		rows.Unresolved = append(rows.Unresolved, u)
	}
	if c.KernelTypeID {
		rows.KernelTypeIDs = append(rows.KernelTypeIDs, rel)
	}
}

// report is a kernel's coverage and load prediction: the size of its
// minimized vmlinux BTF and the rows of every object, in object order.
func report(k kernelkey.Key, path string, objects []string, types, bytes int, rows []objectRows) KernelReport {
	kr := KernelReport{
		Arch: k.Arch, Release: k.Release, Distro: k.Distro, Version: k.Version,
		Path: path, Objects: objects, Types: types, Bytes: bytes,
	}
	for _, r := range rows {
		kr.Unresolved = append(kr.Unresolved, r.Unresolved...)
		kr.KernelTypeIDs = append(kr.KernelTypeIDs, r.KernelTypeIDs...)
		kr.Programs = append(kr.Programs, r.Programs...)
	}
	return kr
}

// statusWords are the statuses statusWord gives an unresolved
// relocation, the only ones a report's Unresolved rows hold.
var statusWords = []string{"absent", "poisoned", coremin.Ambiguous.String(), coremin.Failed.String()}

// relocationKinds are the names of coremin.Kind, the only kinds a
// report's relocation rows hold.
var relocationKinds = func() []string {
	var kinds []string
	for k := coremin.Kind(0); !strings.HasPrefix(k.String(), "Kind("); k++ {
		kinds = append(kinds, k.String())
	}
	return kinds
}()

// statusWord says what an unresolved relocation does to its program.
func statusWord(out coremin.Outcome) string {
	switch {
	case out.Status == coremin.Missing && out.Poisoned:
		return "poisoned"
	case out.Status == coremin.Missing:
		return "absent"
	}
	return out.Status.String()
}

// key spells the kernel as everything else does (runtime.Key's String).
func (kr *KernelReport) key() string {
	return kernelkey.Key{Arch: kr.Arch, Release: kr.Release, Distro: kr.Distro, Version: kr.Version}.String()
}

// TableOptions configures WriteTable; nil means the defaults.
type TableOptions struct {
	// Verbose adds the guarded misses (poisoned instructions no path
	// reaches) and every relocation that does not resolve somewhere.
	Verbose bool
}

// WriteTable writes the report a person reads after a run: one line per
// kernel; the programs that do not load on some kernels, by kernel
// group, with the reasons; with Verbose, the guarded misses and the
// relocations that do not resolve, grouped by relocation with the kernels
// they fail on; then what was skipped.
func (r *Report) WriteTable(w io.Writer, opts *TableOptions) error {
	if opts == nil {
		opts = &TableOptions{}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "KERNEL\tTYPES\tBYTES\tMODULES\tUNRESOLVED\tNOT LOADING")
	for _, k := range r.Kernels {
		mods := make([]string, len(k.Modules))
		for i, m := range k.Modules {
			mods[i] = esc(m.Name)
		}
		notLoading := 0
		for _, p := range k.Programs {
			if p.Verdict != vocab.Loads.String() {
				notLoading++
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\n", k.key(), k.Types, k.Bytes, orDash(strings.Join(mods, ",")), len(k.Unresolved), notLoading)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	r.writeFamilies(w)
	if err := r.writePrograms(w, opts.Verbose); err != nil {
		return err
	}

	type failure struct {
		rel     RelocationReport
		kernels []string
	}
	var failures []*failure
	byRelo := map[RelocationReport]*failure{}
	kernelIDs := map[RelocationReport][]string{}
	for _, k := range r.Kernels {
		for _, u := range k.Unresolved {
			id := u
			id.Reason = ""
			f := byRelo[id]
			if f == nil {
				f = &failure{rel: u}
				byRelo[id] = f
				failures = append(failures, f)
			}
			f.kernels = append(f.kernels, k.key())
		}
		for _, u := range k.KernelTypeIDs {
			kernelIDs[u] = append(kernelIDs[u], k.key())
		}
	}
	if len(failures) > 0 && opts.Verbose {
		fmt.Fprintf(w, "\n%d relocations do not resolve on some kernels. absent: an existence check is false there;\n"+
			"poisoned: the instruction fails verification if reached; ambiguous, failed: cilium/ebpf refuses the program.\n", len(failures))
		for _, f := range failures {
			u := f.rel
			// Program (function) and field path, as the Why section names
			// them; the section and offset follow for the disassembly.
			fmt.Fprintf(w, "  %s %s: %s: %s on %d/%d kernels (%s; %s+%d)",
				esc(u.Object), orDash(esc(u.Function)), esc(u.Field), esc(u.Status),
				len(f.kernels), r.checkedOn(u.Object), abbreviate(f.kernels, 4), esc(u.Section), u.InsnOff)
			if u.Reason != "" {
				fmt.Fprintf(w, ": %s", esc(u.Reason))
			}
			fmt.Fprintln(w)
		}
	}
	if len(kernelIDs) > 0 {
		fmt.Fprintln(w, "\nThese relocations ask for the running kernel's type IDs (bpf_core_type_id_kernel); embedded BTF cannot serve them, so their programs need the kernel's own BTF:")
		for _, u := range slices.SortedFunc(maps.Keys(kernelIDs), compareRelocations) {
			fmt.Fprintf(w, "  %s %s+%d: %s %s\n", esc(u.Object), esc(u.Section), u.InsnOff, esc(u.Kind), esc(u.Type))
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "\n%d corpus entries skipped:\n", len(r.Skipped))
		for _, s := range r.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", esc(s.Path), esc(s.Error))
		}
	}
	return nil
}

// esc is safetext.Escape: every string the table prints from the report
// is escaped, as a report may come from parts (Merge), which are
// untrusted input, and a terminal interprets control characters: a
// reason holding "\x1b[2J" cleared the screen, one holding a newline
// forged a line of the report.
func esc(s string) string { return safetext.Escape(s) }

// checkedOn counts the kernels an object was checked against: those of
// the architectures it pairs with.
func (r *Report) checkedOn(object string) int {
	n := 0
	for _, k := range r.Kernels {
		if slices.Contains(k.Objects, object) {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

func compareRelocations(a, b RelocationReport) int {
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

package generator

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/pathelem"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/safetext"
	"github.com/btfembed/btfembed/internal/vocab"
	btfruntime "github.com/btfembed/btfembed/runtime"
	// withinBudget opens entries with modules, as their agents will.
	_ "github.com/btfembed/btfembed/runtime/modules"
)

// checkPartKernel checks what a part says of one kernel before Merge
// embeds it: a part is an input like a corpus file (a CI artifact another
// job wrote), and its SHA-256 trailer only tells it was not damaged.
//
//   - every key element passes the corpus paths' check
//     (pathelem.Validate), the architecture is one btfembed
//     knows, and the report's key is the entry's;
//   - every module name passes the same check, once per entry;
//   - every blob parses as BTF, the vmlinux BTF has the types and size
//     the report gives, each module's split BTF parses over its distilled
//     base, and the modules relocate onto the entry's vmlinux as the
//     runtime relocates them (the oracle's loading of an entry);
//   - the entry fits the runtime's default decode budget, so the payload
//     it goes into serves it;
//   - its fixups digest is one FixupDigest could give (whether its
//     kernel's family is stable follows from it, as the report's rows
//     follow from theirs: a part is checked for form, not recomputed).
func checkPartKernel(k *partKernel) error {
	key := k.Entry.Key
	fields := [][2]string{{"arch", key.Arch}, {"release", key.Release}, {"distro", key.Distro}, {"version", key.Version}}
	for i, f := range fields {
		if f[1] == "" && i >= 2 { // distro and version may be unknown
			continue
		}
		if err := pathelem.Validate(f[1]); err != nil {
			return fmt.Errorf("kernel %s: %s: %w", key, f[0], err)
		}
	}
	if a, ok := kernelkey.NormalizeArch(key.Arch); !ok || a != key.Arch {
		return fmt.Errorf("kernel %s: unknown architecture %q", key, key.Arch)
	}
	r := &k.Report
	if (kernelkey.Key{Arch: r.Arch, Release: r.Release, Distro: r.Distro, Version: r.Version}) != key {
		return fmt.Errorf("kernel %s: the report is of kernel %s/%s", key, r.Arch, r.Release)
	}
	if len(r.Fixups) != 32 || strings.Trim(r.Fixups, "0123456789abcdef") != "" {
		return fmt.Errorf("kernel %s: fixups digest %q is not 32 hex digits", key, r.Fixups)
	}
	vmlinux, err := rawbtf.Parse(k.Entry.VMLinux, nil)
	if err != nil {
		return fmt.Errorf("kernel %s: vmlinux BTF: %w", key, err)
	}
	if types := int(vmlinux.NextID() - 1); types != r.Types || len(k.Entry.VMLinux) != r.Bytes {
		return fmt.Errorf("kernel %s: vmlinux BTF of %d types, %d bytes; the report says %d, %d", key, types, len(k.Entry.VMLinux), r.Types, r.Bytes)
	}
	var names []string
	for _, m := range k.Entry.Modules {
		if err := pathelem.Validate(m.Name); err != nil {
			return fmt.Errorf("kernel %s: module name: %w", key, err)
		}
		if slices.Contains(names, m.Name) {
			return fmt.Errorf("kernel %s: module %s twice", key, m.Name)
		}
		names = append(names, m.Name)
		base, err := rawbtf.Parse(m.Base, nil)
		if err != nil {
			return fmt.Errorf("kernel %s: module %s: distilled base: %w", key, m.Name, err)
		}
		if _, err := rawbtf.Parse(m.Split, base); err != nil {
			return fmt.Errorf("kernel %s: module %s: split BTF: %w", key, m.Name, err)
		}
	}
	if err := withinBudget(&k.Entry); err != nil {
		return err
	}
	if _, err := minimizedTargets(&k.Entry); err != nil {
		return fmt.Errorf("kernel %s: %w", key, err)
	}
	return nil
}

// withinBudget checks that the runtime, with its default decode budget,
// serves an entry: it encodes the entry alone and selects it with
// package runtime, which checks, loads and decodes its vmlinux and
// module BTF as an agent would, charging what that holds in memory
// (decoded types take 8 to 47 times their bytes, so a byte count would
// not do). A fresh entry is a few KB to a few hundred and takes
// milliseconds; one the runtime refuses comes from a crafted part or
// cache entry, and would embed a kernel every agent refuses.
func withinBudget(e *encode.Entry) error {
	var b bytes.Buffer
	if err := encode.Write(&b, &encode.Payload{Entries: []encode.Entry{{Key: e.Key, VMLinux: e.VMLinux, Modules: e.Modules}}}, nil); err != nil {
		return fmt.Errorf("kernel %s: encode: %w", e.Key, err)
	}
	assets, err := btfruntime.Open(b.Bytes())
	if err == nil {
		_, err = assets.Lookup(e.Key)
	}
	if err != nil {
		return fmt.Errorf("kernel %s: the runtime would refuse its embedded BTF (decode budget %d MiB): %w", e.Key, payload.DefaultBudget>>20, err)
	}
	return nil
}

// checkDigests checks the relocation digests a part records: one set for
// each of its objects, of programs with names the payload can hold (a
// digest is any 16 bytes).
func checkDigests(p *part) error {
	for o := range p.Digests {
		if !slices.Contains(p.Objects, o) {
			return fmt.Errorf("relocation digests of %s, not one of the objects", safetext.Escape(o))
		}
	}
	for _, o := range p.Objects {
		progs, ok := p.Digests[o]
		if !ok {
			return fmt.Errorf("no relocation digests of %s", safetext.Escape(o))
		}
		for name := range progs {
			if !payload.ValidName(name) {
				return fmt.Errorf("%s: program name %q", safetext.Escape(o), name)
			}
		}
	}
	return nil
}

// vocabulary checks that report rows read from a part use the report's
// words: a program's verdict a vocab.Verdict's and its reason a valid
// vocab.Kind (docs/predictions.md), a relocation's kind a
// coremin.Kind's and an unresolved one's status one statusWord gives.
// btfembed writes no other; a crafted part could put any word into the
// JSON report and the payload's verdicts (issue 33: "explodes"). It
// remembers the lists it accepted by their first row: a part holds each
// distinct list once and its kernels share them, so each is checked once.
type vocabulary struct {
	programs            map[*ProgramReport]bool
	unresolved, typeIDs map[*RelocationReport]bool
}

func newVocabulary() *vocabulary {
	return &vocabulary{programs: map[*ProgramReport]bool{}, unresolved: map[*RelocationReport]bool{}, typeIDs: map[*RelocationReport]bool{}}
}

// check checks r's rows.
func (v *vocabulary) check(r *KernelReport) error {
	if len(r.Programs) > 0 && !v.programs[&r.Programs[0]] {
		for _, p := range r.Programs {
			if _, ok := vocab.ParseVerdict(p.Verdict); !ok {
				return fmt.Errorf("kernel %s: program %s %s: verdict %q is not a verdict (docs/predictions.md)", r.key(),
					safetext.Escape(p.Object), safetext.Escape(p.Program), p.Verdict)
			}
			if p.Reason != "" && !vocab.Kind(p.Reason).Valid() {
				return fmt.Errorf("kernel %s: program %s %s: reason kind %q is not a reason kind (docs/predictions.md)", r.key(),
					safetext.Escape(p.Object), safetext.Escape(p.Program), p.Reason)
			}
		}
		v.programs[&r.Programs[0]] = true
	}
	for _, rows := range []struct {
		list     []RelocationReport
		seen     map[*RelocationReport]bool
		statuses []string
	}{{r.Unresolved, v.unresolved, statusWords}, {r.KernelTypeIDs, v.typeIDs, []string{""}}} {
		if len(rows.list) == 0 || rows.seen[&rows.list[0]] {
			continue
		}
		for _, u := range rows.list {
			if !slices.Contains(relocationKinds, u.Kind) || !slices.Contains(rows.statuses, u.Status) {
				return fmt.Errorf("kernel %s: relocation %s %s+%d: kind %q or status %q is none of the report's", r.key(),
					safetext.Escape(u.Object), safetext.Escape(u.Section), u.InsnOff, u.Kind, u.Status)
			}
		}
		rows.seen[&rows.list[0]] = true
	}
	return nil
}

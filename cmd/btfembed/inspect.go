package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/mapfile"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/safetext"
	btfruntime "github.com/btfembed/btfembed/runtime"
	// inspect opens payloads with module BTF too.
	_ "github.com/btfembed/btfembed/runtime/modules"
)

const inspectUsage = `Usage: btfembed inspect [-B base] <file>...

Describes btfembed payloads and BTF files.

For a payload (the .btfembed file beside generated code): one line per
embedded kernel, with its types, modules and the programs predicted not
to load there, as the runtime decodes them.

For BTF in any form "btfembed min" reads (raw BTF, a BTFHub archive, an
ELF vmlinux or module, a kernel image): its types by kind and its size. A
module's split BTF needs its base: -B, or the module's own distilled base
(.BTF.base) when it has one.

Flags:
`

// runInspect is "btfembed inspect".
func runInspect(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("inspect", inspectUsage, stderr)
	basePath := fs.String("B", "", "vmlinux `BTF` that split BTF is over")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usagef("inspect: no file given")
	}
	return withMapped(func(files *mapfile.Mapped) error {
		var base *rawbtf.Spec
		if *basePath != "" {
			var err error
			if base, err = readBTF(files, *basePath, nil); err != nil {
				return fmt.Errorf("inspect: %w", err)
			}
		}
		for _, path := range fs.Args() {
			data, err := files.Map(path, extract.MaxImage)
			if err != nil {
				return fmt.Errorf("inspect: %w", err)
			}
			if bytes.HasPrefix(data, []byte(payload.Magic)) {
				err = inspectPayload(stdout, path, data)
			} else {
				err = inspectBTF(stdout, path, data, base)
			}
			if err != nil {
				return fmt.Errorf("inspect: %w", err)
			}
		}
		// inspect writes no file: a file written while it was inspected
		// only makes what was printed suspect, which the error says.
		if err := files.Unchanged(); err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		return nil
	})
}

func inspectPayload(w io.Writer, path string, data []byte) error {
	assets, err := btfruntime.OpenWithOptions(data, &btfruntime.OpenOptions{DecodeBudget: 4 * btfruntime.DefaultDecodeBudget}) // payloads embedding full BTF too
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p, err := payload.Open(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	stored, _ := p.VerdictsSize()
	fmt.Fprintf(w, "%s: btfembed payload, %d bytes, load verdicts in %d bytes\n", path, len(data), stored)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "KERNEL\tTYPES\tMODULES\tNOT LOADING")
	keys, err := assets.Kernels()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, key := range keys {
		sel, err := assets.Lookup(key)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// The runtime hands out module BTF loaded, not raw: read the
		// entry's modules from the payload itself.
		bud := payload.NewBudget(payload.DefaultBudget)
		e, _, err := p.Find(key, bud)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, key, err)
		}
		var mods []string
		for _, m := range e.Modules {
			n, err := moduleTypes(p, m, bud)
			if err != nil {
				return fmt.Errorf("%s: %s: module %s: %w", path, key, safetext.Escape(m.Name), err)
			}
			mods = append(mods, fmt.Sprintf("%s (%d types)", safetext.Escape(m.Name), n))
		}
		if len(mods) == 0 {
			mods = []string{"-"}
		}
		var skip []string
		for _, pr := range sel.Predictions {
			skip = append(skip, fmt.Sprintf("%s/%s (%s: %s)", pr.Object, pr.Program, pr.Verdict, pr.Kind))
		}
		if len(skip) == 0 {
			skip = []string{"-"}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", key, countTypes(sel.Spec), strings.Join(mods, ", "), strings.Join(skip, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return inspectSections(w, path, p)
}

// inspectSections lists what the payload was generated for and its stable
// kernel families, where it records them (format 5). Names are printable
// (the reader refuses others) and families escape theirs.
func inspectSections(w io.Writer, path string, p *payload.Payload) error {
	objects, err := p.Objects(nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, o := range objects {
		var progs []string
		for _, prog := range o.Programs {
			progs = append(progs, prog.Name)
		}
		fmt.Fprintf(w, "generated for %s (%s)\n", o.Name, strings.Join(progs, ", "))
	}
	families, err := p.Families(nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, f := range families {
		var members []string
		for _, abi := range f.ABIs {
			members = append(members, f.Family.Key(abi).Release)
		}
		fmt.Fprintf(w, "stable family %s (%s)\n", f.Family, safetext.Escape(strings.Join(members, ", ")))
	}
	return nil
}

// moduleTypes counts the types of an embedded module's split BTF.
func moduleTypes(p *payload.Payload, m payload.EntryModule, bud *payload.Budget) (int, error) {
	var rawBase []byte
	if m.HasBase {
		var err error
		if rawBase, err = p.Blob(m.Base, bud); err != nil {
			return 0, err
		}
	}
	rawSplit, err := p.Blob(m.Split, bud)
	if err != nil {
		return 0, err
	}
	base, err := rawbtf.Parse(rawBase, nil)
	if err != nil {
		return 0, err
	}
	split, err := rawbtf.Parse(rawSplit, base)
	if err != nil {
		return 0, err
	}
	return int(split.NextID() - split.FirstID()), nil
}

// countTypes counts the types of a standalone spec, void excluded.
func countTypes(spec *btf.Spec) int {
	n := 0
	for _, err := range spec.All() {
		if err == nil {
			n++
		}
	}
	return n - 1
}

func inspectBTF(w io.Writer, path string, data []byte, base *rawbtf.Spec) error {
	f, err := corpus.ParseBTF(path, data)
	if err != nil {
		return err
	}
	what := "BTF"
	if f.Base != nil {
		if base, err = rawbtf.Parse(f.Base, nil); err != nil {
			return fmt.Errorf("%s: distilled base: %w", path, err)
		}
		what = fmt.Sprintf("split BTF over its distilled base (%d types, %d bytes)", base.NextID()-1, len(f.Base))
	} else if base != nil {
		what = "split BTF"
	}
	spec, err := rawbtf.Parse(f.BTF, base)
	if err != nil {
		if base == nil {
			return fmt.Errorf("%s: %w (split BTF? give its base with -B)", path, err)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	byKind := map[rawbtf.Kind]int{}
	for id := spec.FirstID(); id < spec.NextID(); id++ {
		t, err := spec.Type(id)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		byKind[t.Kind]++
	}
	var kinds []string
	for k := rawbtf.KindInt; k <= rawbtf.KindEnum64; k++ {
		if n := byKind[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	var key string
	if f.Key != (kernelkey.Key{}) {
		key = " [" + f.Key.String() + "]"
	}
	fmt.Fprintf(w, "%s%s: %s, %v, %d bytes, %d types: %s\n", path, key, what, spec.ByteOrder(),
		len(f.BTF), spec.NextID()-spec.FirstID(), strings.Join(kinds, ", "))
	return nil
}

package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/modulehook"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/safetext"
)

// Loading an entry hands the agent cilium/ebpf specs, so everything in
// them is checked first (payload.CheckBTF: framing, every name offset,
// every reference) and every type is decoded once before they are handed
// out: a type cilium/ebpf cannot decode fails the selection, with
// ErrCorrupt, instead of the agent's CO-RE relocation later (issue 33:
// "string at offset 172 is not null terminated" from 34 of 73,212
// mutated payloads that Lookup accepted). Decoding is charged beforehand
// with what CheckBTF computes it takes.

// entryFixed is what a loaded entry holds beside its BTF: its assetEntry,
// its slot in Assets.loaded, the module map.
const entryFixed = 1 << 10

// charges is what one load has taken from the budget: held stays with
// what was loaded, borrowed is given back when the load ends.
type charges struct {
	bud            *payload.Budget
	held, borrowed uint64
}

func (c *charges) keep(n uint64, what string) error {
	if err := c.bud.Charge(n, what); err != nil {
		return err
	}
	c.held += n
	return nil
}

func (c *charges) borrow(n uint64, what string) error {
	if err := c.bud.Charge(n, what); err != nil {
		return err
	}
	c.borrowed += n
	return nil
}

// giveBack returns n borrowed bytes before the load ends.
func (c *charges) giveBack(n uint64) {
	c.bud.Release(n)
	c.borrowed -= n
}

// end gives back what was borrowed, and what was held too if the load
// failed, and returns what stays held.
func (c *charges) end(failed bool) uint64 {
	c.bud.Release(c.borrowed)
	c.borrowed = 0
	if failed {
		c.bud.Release(c.held)
		c.held = 0
	}
	return c.held
}

// loadEntry decompresses, checks, loads and decodes entry e's BTF into
// e.spec, e.modRaw and e.modSpecs, and returns the budget they hold.
func (a *Assets) loadEntry(e *assetEntry) (held uint64, err error) {
	c := &charges{bud: a.bud}
	defer func() { held = c.end(err != nil) }()
	if err := c.keep(entryFixed, "entry"); err != nil {
		return 0, err
	}
	raw, err := a.p.Blob(e.VMLinux, a.bud)
	if err != nil {
		return 0, err
	}
	c.borrowed += e.VMLinux.Held() // dropped once loaded: cilium/ebpf copies it
	vm, err := payload.CheckBTF(raw, nil, false, a.bud)
	if err != nil {
		return 0, corrupt(fmt.Errorf("vmlinux: %w", err))
	}
	defer vm.Release(a.bud)
	spec, err := loadSpec(raw, nil, vm.Cost, c, "vmlinux")
	if err != nil {
		return 0, err
	}
	mods := make([]module, len(e.Modules))
	for i, m := range e.Modules {
		if mods[i], err = a.moduleBlobs(m, c); err != nil { // kept in modRaw
			return 0, err
		}
	}
	// Modules first: each is read over a copy of vmlinux, which is cheap
	// while vmlinux has no decoded type.
	specs, err := loadModules(mods, vm, spec, true, c)
	if err != nil {
		return 0, err
	}
	if err := decode(spec, vm, c, "vmlinux"); err != nil {
		return 0, err
	}
	e.spec, e.modRaw, e.modSpecs = spec, mods, specs
	return 0, nil // held, set by the deferred end
}

// module is the BTF of one embedded kernel module, decoded.
type module struct {
	// name is the module name as in /sys/kernel/btf/<name>.
	name string
	// base is the distilled base BTF split was written over, nil where
	// split is over the entry's vmlinux BTF itself.
	base, split []byte
}

// moduleBlobs decodes module m's blobs, charging c with what they hold.
func (a *Assets) moduleBlobs(m payload.EntryModule, c *charges) (module, error) {
	mod := module{name: m.Name}
	var err error
	if m.HasBase {
		if mod.base, err = a.p.Blob(m.Base, a.bud); err != nil {
			return mod, fmt.Errorf("module %s base: %w", safetext.Escape(m.Name), err)
		}
		c.held += m.Base.Held()
	}
	if mod.split, err = a.p.Blob(m.Split, a.bud); err != nil {
		return mod, fmt.Errorf("module %s: %w", safetext.Escape(m.Name), err)
	}
	c.held += m.Split.Held()
	return mod, nil
}

// loadModules loads mods over vmlinux, which cilium/ebpf loaded from vm's
// bytes. Split BTF with a distilled base is first relocated onto vm
// (libbpf's btf__relocate, modulehook.Relocate, which Open made sure that
// runtime/modules has set: a payload with modules lists them in its
// directory), so one embedded module serves whichever vmlinux BTF was
// selected. Each module is checked, read
// over its own copy of vmlinux (cilium/ebpf v0.22 decodes a split spec's
// base types under the split's lock, not the base's, so a base shared
// with other users races with them: TestModulesConcurrent), and decoded.
// With countBase, the base types that decoding a module reaches are
// charged too; without, vm is the running kernel's own BTF.
//
// It does what internal/btfrelocate's LoadModules does, with which the
// generator verifies modules, plus the checks and charges.
func loadModules(mods []module, vm *payload.BTF, vmlinux *btf.Spec, countBase bool, c *charges) (map[string]*btf.Spec, error) {
	if len(mods) == 0 {
		return nil, nil
	}
	if slices.ContainsFunc(mods, func(m module) bool { return m.base != nil }) {
		// Relocation indexes vm's names and strings, once.
		if err := c.borrow(16*uint64(vm.Spec.NextID()), "vmlinux name index"); err != nil {
			return nil, err
		}
	}
	specs := make(map[string]*btf.Spec, len(mods))
	for _, m := range mods {
		spec, err := loadModule(m, vm, vmlinux, countBase, c)
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", safetext.Escape(m.name), err)
		}
		specs[m.name] = spec
	}
	return specs, nil
}

func loadModule(m module, vm *payload.BTF, vmlinux *btf.Spec, countBase bool, c *charges) (*btf.Spec, error) {
	split := m.split
	if m.base != nil {
		// Both parsed, the distilled base matched against vm, the result
		// encoded: a few times the inputs, dropped once encoded.
		work := 8 * uint64(len(m.split)+len(m.base))
		if err := c.borrow(work, "module relocation"); err != nil {
			return nil, err
		}
		var err error
		split, err = modulehook.Relocate(m.split, m.base, vm.Spec)
		c.giveBack(work)
		if err != nil {
			return nil, err
		}
		if err := c.borrow(uint64(len(split)), "relocated module"); err != nil {
			return nil, err
		}
	}
	mb, err := payload.CheckBTF(split, vm, countBase, c.bud)
	if err != nil {
		return nil, corrupt(err)
	}
	defer mb.Release(c.bud)
	spec, err := loadSpec(split, vmlinux.Copy(), mb.Cost, c, "module")
	if err != nil {
		return nil, err
	}
	if err := decode(spec, mb, c, "module"); err != nil {
		return nil, err
	}
	return spec, nil
}

// corrupt is err, about the payload's bytes, wrapping ErrCorrupt (once:
// a charge the budget cannot take wraps it already).
func corrupt(err error) error {
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// loadSpec loads raw BTF over base (nil: standalone) with cilium/ebpf,
// keeping the budget for what the spec holds (cost.Load).
func loadSpec(raw []byte, base *btf.Spec, cost payload.BTFCost, c *charges, what string) (*btf.Spec, error) {
	if err := c.keep(cost.Load, what); err != nil {
		return nil, err
	}
	// io.ReadAll's buffer grows to hold raw: the last two live together.
	if err := c.borrow(uint64(len(raw)), what); err != nil {
		return nil, err
	}
	defer c.giveBack(uint64(len(raw)))
	spec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(raw), base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return spec, nil
}

// decode decodes every type of spec, loaded from b's bytes, in ID order,
// keeping the budget for what the decoded types hold (b.Cost.Decode) and
// borrowing the stack it takes. cilium/ebpf keeps them: later lookups are
// answered from its cache, without decoding or recursing.
//
// It asks for each ID rawbtf found rather than ranging over spec.All,
// which ends quietly at the first error wrapping btf.ErrNotFound, the
// error of a type that refers past the last one; and the ID after the
// last must not be a type, so that rawbtf and cilium/ebpf framed the same
// records.
func decode(spec *btf.Spec, b *payload.BTF, c *charges, what string) error {
	if err := c.keep(b.Cost.Decode, what+" types"); err != nil {
		return err
	}
	if err := c.borrow(b.Cost.Stack, what+" decoding stack"); err != nil {
		return err
	}
	defer c.giveBack(b.Cost.Stack)
	next := b.Spec.NextID()
	for id := b.Spec.FirstID(); id < next; id++ {
		if _, err := spec.TypeByID(id); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if _, err := spec.TypeByID(next); err == nil {
		return fmt.Errorf("%s: cilium/ebpf reads more than %d types", what, next-1)
	}
	return nil
}

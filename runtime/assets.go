package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/btfrelocate"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/safetext"
	"github.com/btfembed/btfembed/runtime/kernelkey"
)

// ErrCorrupt is wrapped by every error about a malformed payload.
var ErrCorrupt = payload.ErrCorrupt

// Assets is an opened payload. It is safe for concurrent use; each kernel's
// BTF is decompressed and parsed at most once, on first use.
type Assets struct {
	p      *payload.Payload
	budget int64 // OpenOptions.DecodeBudget

	mu     sync.Mutex
	loaded map[Key]*assetEntry // entries looked up so far
}

type assetEntry struct {
	payload.Entry

	once   sync.Once
	spec   *btf.Spec
	modRaw []btfrelocate.Module
	// modSpecs are loaded with spec, once: cilium/ebpf v0.22 is not safe
	// for concurrent use of several split specs over one base.
	modSpecs map[string]*btf.Spec
	loadErr  error
}

// DefaultDecodeBudget is the decode budget of one Select, Lookup or
// Kernels call when OpenOptions leaves it zero: 32 MiB, five times the
// largest full vmlinux BTF shipped today, where an embedded entry's
// minimized BTF is typically under 1 MiB.
const DefaultDecodeBudget = payload.DefaultBudget

// OpenOptions tunes OpenWithOptions. A nil *OpenOptions means the
// defaults.
type OpenOptions struct {
	// DecodeBudget bounds the bytes one Select, Lookup or Kernels call
	// decompresses and parses from the payload, all together: every index
	// block, dictionary and blob it decodes, counted again each time a
	// blob is used (a blob many modules share is parsed once per module),
	// string tables included. A payload that needs more gives an error
	// wrapping ErrCorrupt before the memory is allocated, so a crafted
	// payload cannot exhaust the agent's memory, while peak memory stays
	// a small multiple of the budget. Entries decoded by an earlier call
	// are not charged again. 0 means DefaultDecodeBudget.
	DecodeBudget int64
}

// Open is OpenWithOptions with the default options.
func Open(data []byte) (*Assets, error) { return OpenWithOptions(data, nil) }

// OpenWithOptions parses the header and directory of data, a payload the
// generator wrote; it decompresses no kernel BTF and costs the same however
// many kernels data holds. data must not be modified afterwards. A
// malformed payload gives an error wrapping ErrCorrupt, here or from any
// later call that decodes the malformed part.
func OpenWithOptions(data []byte, opts *OpenOptions) (*Assets, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	p, err := payload.Open(data)
	if err != nil {
		return nil, err
	}
	return &Assets{p: p, budget: opts.DecodeBudget, loaded: map[Key]*assetEntry{}}, nil
}

// newBudget is the budget of one call.
func (a *Assets) newBudget() *payload.Budget { return payload.NewBudget(a.budget) }

// Kernels lists the embedded kernels in key order. It decodes every
// block of the index, which Select never does, so a corrupt block that
// Open could not see is an error here, wrapping ErrCorrupt.
func (a *Assets) Kernels() ([]Key, error) {
	entries, err := a.p.Entries(a.newBudget())
	if err != nil {
		return nil, err
	}
	keys := make([]Key, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	return keys, nil
}

// entry returns the one assetEntry for e, so each kernel loads once.
func (a *Assets) entry(e payload.Entry) *assetEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	ae := a.loaded[e.Key]
	if ae == nil {
		ae = &assetEntry{Entry: e}
		a.loaded[e.Key] = ae
	}
	return ae
}

// Lookup returns the embedded BTF for exactly key (its Arch normalized
// with kernelkey.NormalizeArch). An unknown key gives an error wrapping
// ErrKernelNotSupported.
func (a *Assets) Lookup(key Key) (*Selection, error) {
	key.Arch, _ = kernelkey.NormalizeArch(key.Arch)
	bud := a.newBudget()
	e, ok, err := a.p.Find(key, bud)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &NotSupportedError{Key: key, Embedded: a.p.Len()}
	}
	return a.selection(a.entry(e), bud)
}

// selection loads entry e (once, within bud) and wraps it in a Selection.
func (a *Assets) selection(e *assetEntry, bud *payload.Budget) (*Selection, error) {
	spec, modRaw, err := a.load(e, bud)
	if err != nil {
		return nil, err
	}
	preds, objects, err := a.predictions(e.Entry, bud)
	if err != nil {
		return nil, fmt.Errorf("embedded verdicts for %s: %w", e.Key, err)
	}
	sel := &Selection{
		Source: SourceEmbedded, Key: e.Key, Spec: spec, moduleBTF: modRaw,
		Predicted: true, Predictions: preds, objects: objects,
	}
	if len(e.modSpecs) > 0 {
		sel.Modules = maps.Clone(e.modSpecs)
	}
	return sel, nil
}

// load decompresses and parses entry e, once, within bud. Every error is
// about the payload's bytes, so it wraps ErrCorrupt: a blob that is not
// BTF, a module that does not relocate onto its own entry's vmlinux.
func (a *Assets) load(e *assetEntry, bud *payload.Budget) (*btf.Spec, []btfrelocate.Module, error) {
	e.once.Do(func() {
		e.spec, e.modRaw, e.modSpecs, e.loadErr = a.loadEntry(e, bud)
		switch {
		case e.loadErr == nil:
		case errors.Is(e.loadErr, ErrCorrupt):
			e.loadErr = fmt.Errorf("embedded BTF for %s: %w", e.Key, e.loadErr)
		default:
			e.loadErr = fmt.Errorf("%w: embedded BTF for %s: %w", ErrCorrupt, e.Key, e.loadErr)
		}
	})
	return e.spec, e.modRaw, e.loadErr
}

func (a *Assets) loadEntry(e *assetEntry, bud *payload.Budget) (*btf.Spec, []btfrelocate.Module, map[string]*btf.Spec, error) {
	// Relocating a distilled module needs the raw vmlinux BTF; otherwise
	// cilium/ebpf reads it while it is unpacked, never whole.
	var r io.ReaderAt
	var raw []byte
	var err error
	if slices.ContainsFunc(e.Modules, func(m payload.EntryModule) bool { return m.HasBase }) {
		raw, err = a.p.Blob(e.VMLinux, bud)
		r = bytes.NewReader(raw)
	} else {
		r, err = a.p.BlobReader(e.VMLinux, bud)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	// Raw BTF, never ELF: skip LoadSpecFromReader's ELF probe.
	spec, err := btf.LoadSplitSpecFromReader(r, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var mods []btfrelocate.Module
	for _, m := range e.Modules {
		mod := btfrelocate.Module{Name: m.Name}
		if m.HasBase {
			if mod.Base, err = a.p.Blob(m.Base, bud); err != nil {
				return nil, nil, nil, fmt.Errorf("module %s base: %w", safetext.Escape(mod.Name), err)
			}
		}
		if mod.Split, err = a.p.Blob(m.Split, bud); err != nil {
			return nil, nil, nil, fmt.Errorf("module %s: %w", safetext.Escape(mod.Name), err)
		}
		mods = append(mods, mod)
	}
	specs, err := btfrelocate.LoadModules(mods, raw, spec)
	if err != nil {
		return nil, nil, nil, err
	}
	return spec, mods, specs, nil
}

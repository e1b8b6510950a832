package runtime

import (
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/modulehook"
	"github.com/btfembed/btfembed/internal/payload"
)

// ErrCorrupt is wrapped by every error about a malformed payload.
var ErrCorrupt = payload.ErrCorrupt

// Assets is an opened payload. It is safe for concurrent use; a kernel's
// BTF is decompressed, checked and decoded on first use, and kept for
// later calls while the decode budget holds it (see OpenOptions).
type Assets struct {
	p      *payload.Payload
	bud    *payload.Budget // OpenOptions.DecodeBudget, for every call
	goFile string          // OpenOptions.GoFile

	mu     sync.Mutex
	loaded map[Key]*assetEntry // entries looked up so far
}

type assetEntry struct {
	payload.Entry

	mu   sync.Mutex // held while loading, or resolving the verdicts
	done bool       // loaded, or failed for good
	spec *btf.Spec
	// modRaw is the embedded module BTF, for relocating modules onto the
	// kernel's own BTF.
	modRaw []module
	// modSpecs are loaded with spec, once: cilium/ebpf v0.22 is not safe
	// for concurrent use of several split specs over one base.
	modSpecs map[string]*btf.Spec
	loadErr  error
	held     uint64 // what the loaded entry holds of the budget

	// The entry's verdicts, resolved by the first Selection of it
	// (predict), and the budget they hold.
	predicted bool
	preds     []Prediction
	objects   map[string][]string
	predHeld  uint64
}

// DefaultDecodeBudget is the memory an Assets may take when OpenOptions
// leaves it zero: 32 MiB. An embedded entry's minimized BTF, decoded, is
// typically a few hundred KB, and a 1,000-kernel index a few hundred.
const DefaultDecodeBudget = payload.DefaultBudget

// OpenOptions tunes OpenWithOptions. A nil *OpenOptions means the
// defaults.
type OpenOptions struct {
	// DecodeBudget bounds the memory an Assets takes from its payload,
	// across all calls: the index blocks, dictionaries and verdicts it
	// has decoded and keeps, the kernels it has loaded and keeps (their
	// BTF as cilium/ebpf holds it, every type decoded, modules
	// included), and what the call in progress holds for a moment
	// (decompressed blobs, the decoder's stack). Each is charged what it
	// occupies in memory, before it is allocated. A payload that needs
	// more gives an error wrapping ErrCorrupt, so a crafted payload
	// cannot exhaust the agent's memory: no payload the generator writes
	// needs more than the default. When a kernel does not fit, the
	// kernels loaded by earlier calls are let go first (Selections that
	// hold them keep them alive, outside the budget). 0 means
	// DefaultDecodeBudget.
	DecodeBudget int64
	// GoFile is the generated Go file that embeds the payload
	// ("kernelbtf_amd64.go"), which errors about the objects it was
	// generated for name (Selection.Check): the generated code sets it.
	GoFile string
}

// Open is OpenWithOptions with the default options.
func Open(data []byte) (*Assets, error) { return OpenWithOptions(data, nil) }

// OpenWithOptions parses the header and directory of data, a payload the
// generator wrote; it decompresses no kernel BTF and costs the same however
// many kernels data holds. data must not be modified afterwards. A
// malformed payload gives an error wrapping ErrCorrupt, here or from any
// later call that decodes the malformed part. A payload that embeds module
// BTF is refused unless the agent links package runtime/modules, which the
// generated code imports for such a payload.
func OpenWithOptions(data []byte, opts *OpenOptions) (*Assets, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	bud := payload.NewBudget(opts.DecodeBudget)
	p, err := payload.OpenBudget(data, bud)
	if err != nil {
		return nil, err
	}
	if p.HasModules() && modulehook.Relocate == nil {
		return nil, modulesNotLinked(opts.GoFile)
	}
	return &Assets{p: p, bud: bud, goFile: opts.GoFile, loaded: map[Key]*assetEntry{}}, nil
}

// modulesNotLinked is Open's error for a payload with module BTF in an
// agent that cannot relocate it. Open fails rather than a selection, so
// that the agent's first test run shows it on any machine, and never
// serves a kernel without the modules its programs need.
func modulesNotLinked(goFile string) error {
	what := "the payload"
	if goFile != "" {
		what = goFile + "'s payload"
	}
	return fmt.Errorf("%s embeds module BTF, which only an agent that links %s can relocate: run go generate, which imports it in the generated file for such a payload (or import _ %q)", what, modulesPkg, modulesPkg)
}

// modulesPkg is the package that links module relocation.
const modulesPkg = "github.com/btfembed/btfembed/runtime/modules"

// retry runs call, and once more if it failed for want of budget and
// letting go of the kernels loaded so far freed some.
func (a *Assets) retry(call func() error) error {
	err := call()
	if errors.Is(err, payload.ErrOverBudget) && a.evict() {
		err = call()
	}
	return err
}

// evict lets go of every loaded entry that no call is loading, and says
// whether that gave back any budget.
func (a *Assets) evict() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	freed := false
	for k, e := range a.loaded {
		if !e.mu.TryLock() {
			continue // being loaded
		}
		if e.done {
			freed = freed || e.held > 0 || e.predHeld > 0
			a.bud.Release(e.held + e.predHeld)
			e.held, e.predHeld = 0, 0
			delete(a.loaded, k)
		}
		e.mu.Unlock()
	}
	return freed
}

// Kernels lists the embedded kernels in key order. It decodes every
// block of the index, which Select never does, so a corrupt block that
// Open could not see is an error here, wrapping ErrCorrupt.
func (a *Assets) Kernels() ([]Key, error) {
	var keys []Key
	err := a.retry(func() (err error) {
		keys, err = a.p.Keys(a.bud)
		return err
	})
	if err != nil {
		return nil, err
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

// Lookup returns the embedded BTF for exactly key, whose Arch may be
// spelled as uname -m, GOARCH or a distribution does (amd64, x86_64 and
// x86-64 are one). An unknown key gives an error wrapping
// ErrKernelNotSupported.
func (a *Assets) Lookup(key Key) (*Selection, error) {
	key.Arch, _ = kernelkey.NormalizeArch(key.Arch)
	var sel *Selection
	err := a.retry(func() error {
		e, ok, err := a.p.Find(key, a.bud)
		if err != nil {
			return err
		}
		if !ok {
			return &NotSupportedError{Key: key, Embedded: a.p.Len()}
		}
		sel, err = a.selection(a.entry(e))
		return err
	})
	if err != nil {
		return nil, err
	}
	return sel, nil
}

// selection loads entry e (once) and wraps it in a Selection.
func (a *Assets) selection(e *assetEntry) (*Selection, error) {
	spec, modRaw, modSpecs, err := a.load(e)
	if err != nil {
		return nil, err
	}
	sel := &Selection{Source: SourceEmbedded, Key: e.Key, Spec: spec, moduleBTF: modRaw, assets: a}
	if err := a.predict(sel, e); err != nil {
		return nil, err
	}
	if len(modSpecs) > 0 {
		sel.Modules = maps.Clone(modSpecs)
	}
	return sel, nil
}

// load loads entry e, once, charging the budget with what it holds. Every
// error is about the payload's bytes, so it wraps ErrCorrupt: a blob that
// is not BTF, a module that does not relocate onto its own entry's
// vmlinux. A load that failed for want of budget is tried again by the
// next call.
func (a *Assets) load(e *assetEntry) (*btf.Spec, []module, map[string]*btf.Spec, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		held, err := a.loadEntry(e)
		if err != nil {
			err = corrupt(fmt.Errorf("embedded BTF for %s: %w", e.Key, err))
		}
		if errors.Is(err, payload.ErrOverBudget) {
			return nil, nil, nil, err
		}
		e.done, e.loadErr, e.held = true, err, held
	}
	return e.spec, e.modRaw, e.modSpecs, e.loadErr
}

package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/modulehook"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// typeNames lists every named type of spec as "kind name" in ID order, an
// independent view of what a blob decoded to.
func typeNames(tb testing.TB, spec *btf.Spec) []string {
	tb.Helper()
	var names []string
	for typ, err := range spec.All() {
		if err != nil {
			tb.Fatal(err)
		}
		names = append(names, typ.TypeName())
	}
	return names
}

func loadRaw(tb testing.TB, raw []byte) *btf.Spec {
	tb.Helper()
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	return spec
}

func TestEncodeOpenLookup(t *testing.T) {
	entries := payloadtest.Entries(t)
	for name, opts := range map[string]*encode.Options{
		"default":         nil,
		"no dictionaries": {MaxDictSize: -1},
		"small dict":      {MaxDictSize: 1},
	} {
		t.Run(name, func(t *testing.T) {
			p := payloadtest.Encode(t, entries, opts)
			a := open(t, p)
			pp, err := payload.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			all, err := payloadtest.All(pp, nil)
			if err != nil {
				t.Fatal(err)
			}
			codecs := map[[2]bool]bool{} // {dictionary, slice}
			for _, e := range all {
				codecs[[2]bool{e.VMLinux.Dict.ID != 0, e.VMLinux.Codec == payload.CodecSlice}] = true
			}
			if name == "small dict" && !(codecs[[2]bool{true, true}] && codecs[[2]bool{true, false}]) {
				t.Fatalf("small dictionaries should give both slices and differences, got %v", codecs)
			}
			var want []Key
			for _, e := range entries {
				want = append(want, e.Key)
			}
			slices.SortFunc(want, Key.Compare)
			if got, err := a.Kernels(); err != nil || !slices.Equal(got, want) {
				t.Fatalf("Kernels() = %v, %v; want %v", got, err, want)
			}
			for _, e := range entries {
				sel, err := a.Lookup(e.Key)
				if err != nil {
					t.Fatal(err)
				}
				if sel.Source != SourceEmbedded || sel.Key != e.Key {
					t.Errorf("Lookup(%s) = %v %s", e.Key, sel.Source, sel.Key)
				}
				if got, want := typeNames(t, sel.Spec), typeNames(t, loadRaw(t, e.VMLinux)); !slices.Equal(got, want) {
					t.Errorf("%s: decoded types differ from the input", e.Key)
				}
			}
		})
	}
}

// TestLookupShared checks concurrent callers get one decoded spec.
func TestLookupShared(t *testing.T) {
	entries := payloadtest.Entries(t)
	a := open(t, payloadtest.Encode(t, entries, nil))
	specs := make([]*btf.Spec, 8)
	var wg sync.WaitGroup
	for i := range specs {
		wg.Go(func() {
			sel, err := a.Lookup(entries[i%2].Key)
			if err != nil {
				t.Error(err)
				return
			}
			specs[i] = sel.Spec
		})
	}
	wg.Wait()
	for i := 2; i < len(specs); i++ {
		if specs[i] != specs[i%2] {
			t.Fatalf("caller %d got another spec than caller %d", i, i%2)
		}
	}
}

func TestModules(t *testing.T) {
	for _, withBase := range []bool{false, true} {
		e := moduleEntry(t, withBase)
		a := openBudget(t, payloadtest.Encode(t, []encode.Entry{e}, nil), fullBudget)
		co, sel, err := a.CollectionOptions(&SelectOptions{ForceEmbedded: true, Arch: "amd64", Release: "testmod", Distro: "-"})
		if err != nil {
			t.Fatalf("distilled base %v: %v", withBase, err)
		}
		mod := sel.Modules["bpf_testmod"]
		if mod == nil || len(sel.moduleBTF) != 1 || !bytes.Equal(sel.moduleBTF[0].base, e.Modules[0].Base) {
			t.Fatalf("distilled base %v: Modules %v, moduleBTF %d", withBase, sel.Modules, len(sel.moduleBTF))
		}
		var st *btf.Struct
		if err := mod.TypeByName("bpf_testmod_struct_arg_1", &st); err != nil {
			t.Fatal(err)
		}
		// A module type that embeds a vmlinux type refers to the selected
		// vmlinux's copy of it, whatever base the module was built on.
		var ops *btf.Struct
		if err := mod.TypeByName("bpf_testmod_ops", &ops); err != nil {
			t.Fatal(err)
		}
		if co.Programs.KernelTypes != sel.Spec || len(co.Programs.ExtraRelocationTargets) != 1 || co.Programs.ExtraRelocationTargets[0] != mod {
			t.Fatalf("CollectionOptions: %+v", co.Programs)
		}
		again, err := a.Lookup(e.Key)
		if err != nil || again.Modules["bpf_testmod"] != mod {
			t.Fatalf("module spec not shared between selections of one entry: %v", err)
		}
	}

	// btf_testmod embeds lock types whose sizes differ in the Debian
	// kernels (distill's golden outcomes): selecting it there is an
	// error, not a silent skip.
	bad := moduleEntry(t, true)
	bad.VMLinux = kerneltest.Corpus(t)[0].BTF
	a := openBudget(t, payloadtest.Encode(t, []encode.Entry{bad}, nil), fullBudget)
	if _, err := a.Lookup(bad.Key); err == nil || !strings.Contains(err.Error(), "bpf_testmod") {
		t.Fatalf("relocation onto an unrelated kernel: %v, want an error naming the module", err)
	}
}

// TestModulesNotLinked: without runtime/modules, a payload with module
// BTF, base or not, fails to open with an error that says what to do, and
// one without opens. (The test binary links runtime/modules, so the test
// unsets what it registered; it must not run in parallel.)
func TestModulesNotLinked(t *testing.T) {
	relocate := modulehook.Relocate
	modulehook.Relocate = nil
	t.Cleanup(func() { modulehook.Relocate = relocate })
	for _, withBase := range []bool{false, true} {
		p := payloadtest.Encode(t, []encode.Entry{moduleEntry(t, withBase)}, nil)
		_, err := OpenWithOptions(p, &OpenOptions{GoFile: "kernelbtf_amd64.go"})
		if err == nil || !strings.Contains(err.Error(), "kernelbtf_amd64.go's payload embeds module BTF") ||
			!strings.Contains(err.Error(), "run go generate") || !strings.Contains(err.Error(), `import _ "github.com/btfembed/btfembed/runtime/modules"`) {
			t.Errorf("distilled base %v: Open: %v, want an error that says to run go generate", withBase, err)
		}
	}
	if _, err := Open(payloadtest.Encode(t, payloadtest.Entries(t), nil)); err != nil {
		t.Errorf("a payload without modules: %v", err)
	}
}

// resum recomputes a payload's checksum after a test changed it.
func resum(p []byte) {
	if len(p) >= 16 {
		binary.LittleEndian.PutUint32(p[12:], payload.Checksum(p[16:]))
	}
}

// TestOpenLazyBlocks damages the last block of the index of a payload of
// several: Open, which reads only the directory, and Lookup of a kernel in
// another block must not notice; Lookup of a kernel in that block and
// Kernels, which decodes them all, must.
func TestOpenLazyBlocks(t *testing.T) {
	entries := payloadtest.Many(t, 2*payload.BlockLen+1)
	p := payloadtest.Encode(t, entries, nil)
	dirLen, blocksLen := binary.LittleEndian.Uint32(p[16:]), binary.LittleEndian.Uint32(p[20:])
	p[payload.HeaderLen+dirLen+blocksLen-1] ^= 0x5a // the last frame's last byte
	resum(p)
	a := open(t, p)
	slices.SortFunc(entries, func(a, b encode.Entry) int { return a.Key.Compare(b.Key) })
	if _, err := a.Lookup(entries[0].Key); err != nil {
		t.Fatalf("kernel of an intact block: %v", err)
	}
	if _, err := a.Lookup(entries[len(entries)-1].Key); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("kernel of the damaged block: error %v, want ErrCorrupt", err)
	}
	if got, err := a.Kernels(); got != nil || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Kernels() of a damaged payload = %d kernels, %v; want ErrCorrupt", len(got), err)
	}
}

func TestOpenRejects(t *testing.T) {
	good := payloadtest.Encode(t, payloadtest.Entries(t), nil)
	mutate := func(f func(p []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for name, p := range map[string][]byte{
		"empty":     nil,
		"short":     good[:10],
		"magic":     mutate(func(p []byte) []byte { p[0] = 'X'; return p }),
		"version":   mutate(func(p []byte) []byte { p[8] = 9; resum(p); return p }),
		"checksum":  mutate(func(p []byte) []byte { p[len(p)-1] ^= 1; return p }),
		"index len": mutate(func(p []byte) []byte { binary.LittleEndian.PutUint32(p[16:], 1<<30); resum(p); return p }),
		"truncated": mutate(func(p []byte) []byte { p = p[:len(p)-1]; resum(p); return p }),
	} {
		if _, err := Open(p); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
}

// TestCorruptBytes flips each byte of a payload's header and index and
// every fifth of its data, fixes the checksum so that the damage reaches
// the parsers, and asks for every kernel: any error is fine, a panic is
// not.
func TestCorruptBytes(t *testing.T) {
	entries := payloadtest.Entries(t)
	good := payloadtest.Encode(t, entries, nil)
	dataStart := payload.HeaderLen + int(binary.LittleEndian.Uint32(good[16:])) + int(binary.LittleEndian.Uint32(good[20:]))
	for i := 16; i < len(good); i++ {
		if i > dataStart && i%5 != 0 {
			continue
		}
		p := bytes.Clone(good)
		p[i] ^= 0x5a
		resum(p)
		exercise(t, p)
	}
}

// exercise opens p and looks up every kernel it lists, failing the test
// on a panic, on an error that does not wrap ErrCorrupt (issue 18: 2% of
// mutated payloads gave cilium/ebpf's errors bare), or on a selection
// whose BTF cilium/ebpf cannot decode (issue 33: 34 of 73,212 mutated
// payloads passed Lookup and failed in cilium/ebpf).
func exercise(t *testing.T, p []byte) {
	t.Helper()
	corrupt := func(what string, err error) bool {
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: error %q does not wrap ErrCorrupt", what, err)
		}
		return err != nil
	}
	a, err := Open(p)
	if corrupt("Open", err) {
		return
	}
	keys, err := a.Kernels()
	corrupt("Kernels", err) // a corrupt block: exercise what is listed
	for _, k := range keys {
		sel, err := a.Lookup(k)
		if corrupt("Lookup "+k.String(), err) {
			continue
		}
		decodesAll(t, k.String(), sel)
	}
}

// TestDecodeBudget is issue 18's amplification payload: a few KB naming, from
// each of several modules, one blob of a 200 MiB string table. Each module
// decoded it again (four took 2.2 GiB, eight died of memory); within the
// decode budget, Lookup fails with ErrCorrupt before allocating it.
func TestDecodeBudget(t *testing.T) {
	const strLen = 200 << 20
	key := Key{Arch: "x86_64", Release: "amplified"}
	p := payloadtest.Amplification(t, key, 4, strLen)
	t.Logf("payload of %d bytes", len(p))
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	_, err := open(t, p).Lookup(key)
	goruntime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "decode budget") {
		t.Fatalf("Lookup: error %v, want ErrCorrupt for the decode budget", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*DefaultDecodeBudget {
		t.Errorf("Lookup allocated %d MiB, budget %d MiB", alloc>>20, DefaultDecodeBudget>>20)
	}
	// The budget is the caller's: one that fits the blob, loaded as
	// vmlinux, fails on a module's use of it.
	p = payloadtest.Amplification(t, key, 4, 1<<20)
	if _, err := openBudget(t, p, 8<<20).Lookup(key); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "module m") {
		t.Errorf("budget of one blob: error %v, want ErrCorrupt at a module", err)
	}
}

// TestModulesConcurrent decodes a selection's vmlinux and module types from
// several goroutines at once, as agents loading several collections at
// start-up do. Run with -race: a module spec that shared its base with the
// selection's vmlinux spec raced (cilium/ebpf v0.22 decodes a split spec's
// base types under the split's lock only).
func TestModulesConcurrent(t *testing.T) {
	e := moduleEntry(t, true)
	for range 5 {
		a := openBudget(t, payloadtest.Encode(t, []encode.Entry{e}, nil), fullBudget)
		sel, err := a.Lookup(e.Key)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 8 {
			wg.Go(func() {
				<-start
				if i%2 == 0 {
					for _, err := range sel.Modules["bpf_testmod"].All() {
						if err != nil {
							t.Error(err)
							return
						}
					}
					return
				}
				// vmlinux types the module refers to.
				for _, name := range []string{"file", "module", "mutex", "task_struct"} {
					if _, err := sel.Spec.AnyTypesByName(name); err != nil {
						t.Error(err)
					}
				}
			})
		}
		close(start)
		wg.Wait()
	}
}

// TestLookupArchSpellings: Lookup takes an architecture as uname -m,
// GOARCH or a distribution spells it, in any ASCII case, and finds the
// entry keyed with BTFHub's name; an unknown spelling finds nothing.
func TestLookupArchSpellings(t *testing.T) {
	entries := payloadtest.Entries(t)
	a := open(t, payloadtest.Encode(t, entries, nil))
	var e *encode.Entry
	for i := range entries {
		if entries[i].Key.Arch == "x86_64" {
			e = &entries[i]
			break
		}
	}
	if e == nil {
		t.Fatal("no x86_64 entry in the test payload")
	}
	for _, arch := range []string{"x86_64", "amd64", "x86-64", "X86_64", "AMD64"} {
		k := e.Key
		k.Arch = arch
		sel, err := a.Lookup(k)
		if err != nil || sel.Key != e.Key {
			t.Errorf("Lookup with Arch %q = %v, %v; want %s", arch, sel, err, e.Key)
		}
	}
	k := e.Key
	k.Arch = "amd65"
	if _, err := a.Lookup(k); !errors.Is(err, ErrKernelNotSupported) {
		t.Errorf("Lookup with Arch amd65 = %v, want ErrKernelNotSupported", err)
	}
}

package btfload

import (
	"bytes"
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// blob is raw BTF to load both ways.
type blob struct {
	name string
	raw  []byte
}

// blobs are the testdata kernels (the first in -short) and the .BTF
// sections of the test objects, both byte orders, with and without
// empty data sections.
func blobs(t testing.TB) []blob {
	var bs []blob
	for i, k := range kerneltest.Corpus(t) {
		if testing.Short() && i > 0 {
			break
		}
		bs = append(bs, blob{k.Name, k.BTF})
	}
	objs, err := filepath.Glob(filepath.Join(kerneltest.Dir(), "objects", "*.o"))
	if err != nil || len(objs) == 0 {
		t.Fatalf("no test objects: %v", err)
	}
	for _, o := range objs {
		f, err := elf.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := f.Section(".BTF").Data()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		bs = append(bs, blob{filepath.Base(o), raw})
	}
	return bs
}

// encode is every type of s, in ID order, as cilium/ebpf marshals it: two
// loads that decode to the same types encode to the same bytes.
func encode(t *testing.T, s *btf.Spec) []byte {
	out, err := encodeAll(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSpecLoadsAsPlain checks that Spec decodes every blob to what
// btf.LoadSpecFromReader decodes from its bytes, and that the blobs it
// must load the plain way (a data section of size zero) are the ones
// cilium/ebpf cannot read through the wrapper: the check is needed, and
// it is not what decides for the other blobs.
func TestSpecLoadsAsPlain(t *testing.T) {
	var wrapped, plain int
	for _, b := range blobs(t) {
		t.Run(b.name, func(t *testing.T) {
			want, err := btf.LoadSpecFromReader(bytes.NewReader(b.raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Spec(b.raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(encode(t, got), encode(t, want)) {
				t.Fatal("Spec decodes other types than btf.LoadSpecFromReader")
			}

			_, bo, _ := rawbtf.ParseHeader(b.raw)
			viaELF, err := btf.LoadSpecFromReader(newWrapper(bytes.NewReader(b.raw), int64(len(b.raw)), bo.(order)))
			if err != nil {
				t.Fatalf("cilium/ebpf does not read the wrapper: %v", err)
			}
			var failed error
			for _, err := range viaELF.All() {
				if err != nil {
					failed = err
					break
				}
			}
			index, err := rawbtf.Parse(b.raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			switch empty := emptyDatasec(index); {
			case empty && failed == nil:
				t.Error("loaded the plain way, but the wrapper reads it as well")
			case !empty && failed != nil:
				t.Errorf("the wrapper fails on it: %v", failed)
			case !empty && !bytes.Equal(encode(t, viaELF), encode(t, want)):
				t.Error("the wrapper decodes other types than btf.LoadSpecFromReader")
			case empty:
				plain++
			default:
				wrapped++
			}
		})
	}
	if wrapped == 0 || plain == 0 {
		t.Errorf("%d blobs went through the wrapper and %d the plain way: the test needs both", wrapped, plain)
	}
}

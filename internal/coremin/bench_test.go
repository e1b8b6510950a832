package coremin

import (
	"testing"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// BenchmarkMinimize is one kernel (already decompressed, as bpftool reads
// it) and all test objects: parse the kernel, load the objects, match and
// minimize, the job of one "bpftool gen min_core_btf" call.
func BenchmarkMinimize(b *testing.B) {
	objs := testObjects(b)
	for _, k := range kernels(b) {
		data := k.raw
		b.Run(k.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				spec, err := rawbtf.Parse(data, nil)
				if err != nil {
					b.Fatal(err)
				}
				loaded, err := Load(objs...)
				if err != nil {
					b.Fatal(err)
				}
				res, err := match(loaded, []*rawbtf.Spec{spec})
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := Minimize(res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMatch is Match and Minimize alone, on a parsed kernel and
// loaded objects: the per-kernel cost when the objects are loaded once.
func BenchmarkMatch(b *testing.B) {
	objs, err := Load(testObjects(b)...)
	if err != nil {
		b.Fatal(err)
	}
	k := kernels(b)[0]
	spec, err := rawbtf.Parse(k.raw, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := match(objs, []*rawbtf.Spec{spec})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Minimize(res); err != nil {
			b.Fatal(err)
		}
	}
}

// bigObject is testdata/objects/big: 33,857 relocations over 692 distinct
// accesses in 408 functions, the shape of a big agent.
const bigObject = "../../testdata/objects/big/big-el.o"

// BenchmarkMinimizeBig is BenchmarkMinimize for the big object alone on
// each kernel: what "btfembed min" does with it, from raw kernel BTF to
// minimized BTF.
func BenchmarkMinimizeBig(b *testing.B) {
	for _, k := range kernels(b) {
		data := k.raw
		b.Run(k.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				spec, err := rawbtf.Parse(data, nil)
				if err != nil {
					b.Fatal(err)
				}
				loaded, err := Load(bigObject)
				if err != nil {
					b.Fatal(err)
				}
				res, err := match(loaded, []*rawbtf.Spec{spec})
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := Minimize(res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

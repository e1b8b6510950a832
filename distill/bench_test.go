package distill_test

import (
	"os"
	"testing"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// benchModules are the modules of one kernel: the corpus package's 1,121
// when BTFEMBED_CORPUS is set, else the committed x86_64 6.12 ones.
func benchModules(b *testing.B) []module {
	b.Helper()
	if os.Getenv("BTFEMBED_CORPUS") != "" && !testing.Short() {
		return packageModules(b)
	}
	var mods []module
	for _, m := range committedModules(b) {
		if m.release == "6.12.118+deb12-amd64" {
			mods = append(mods, m)
		}
	}
	return mods
}

// BenchmarkDistill distills every module of one kernel per iteration and
// reports the time per module.
func BenchmarkDistill(b *testing.B) {
	mods := benchModules(b)
	k := kernelFor(b, mods[0].release)
	splits := make([]*rawbtf.Spec, len(mods))
	for i, m := range mods {
		splits[i] = parseSplit(b, m.btf, k.raw)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, s := range splits {
			if _, _, err := distill.DistillSpec(s); err != nil {
				b.Fatalf("%s: %v", mods[i].name, err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(mods)), "µs/module")
}

// BenchmarkRelocate relocates every distilled module of one kernel back
// onto that kernel per iteration and reports the time per module.
func BenchmarkRelocate(b *testing.B) {
	mods := benchModules(b)
	k := kernelFor(b, mods[0].release)
	splits := make([]*rawbtf.Spec, len(mods))
	for i, m := range mods {
		_, splits[i] = distillModule(b, m)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, s := range splits {
			if _, err := distill.RelocateSpec(s, k.raw, nil); err != nil {
				b.Fatalf("%s: %v", mods[i].name, err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(mods)), "µs/module")
}

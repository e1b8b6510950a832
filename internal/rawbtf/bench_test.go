package rawbtf

import (
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// BenchmarkParse is the per-kernel floor: the linear pass plus the name
// index a CO-RE lookup needs.
func BenchmarkParse(b *testing.B) {
	k := kerneltest.ByName(b, "6.1.0-47-amd64")
	b.SetBytes(int64(len(k.BTF)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(k.BTF, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.TypesByEssentialName("task_struct")) == 0 {
			b.Fatal("no task_struct")
		}
	}
}

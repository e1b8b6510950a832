package extract

import (
	"debug/elf"
	"errors"
	"runtime"
	"testing"

	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

// TestModuleNotELF: a compressed module that does not open with the ELF
// magic is refused from its first bytes, before it inflates (issue 33:
// eleven .ko.xz of 380 MiB of zeros, in a 1 KB package, held the memory
// budget and hung the import); a real one is read.
func TestModuleNotELF(t *testing.T) {
	zeros := make([]byte, 64<<20)
	module := extracttest.MakeELF(elf.EM_X86_64, extracttest.Section{Name: ".BTF", Data: extracttest.SmallBTF(t)})
	for _, format := range []string{FormatXZ, FormatGzip, FormatZstd} {
		ext := map[string]string{FormatXZ: ".xz", FormatGzip: ".gz", FormatZstd: ".zst"}[format]
		bomb := extracttest.Compressors[format](t, zeros)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ModuleBTF("a.ko"+ext, bomb)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("%s: %v, want ErrUnknownFormat", format, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("%s: %d MiB allocated to refuse it", format, n>>20)
		}
		if btf, err := ModuleBTF("a.ko"+ext, extracttest.Compressors[format](t, module)); err != nil || len(btf) == 0 {
			t.Errorf("%s: a real module: %v", format, err)
		}
	}
}

package corpus

import (
	"context"

	icorpus "github.com/btfembed/btfembed/internal/corpus"
)

// ImportOptions tune [Import]; a nil *ImportOptions means the defaults.
// Its fields:
//
//   - Key (runtime.Key): key parts set here win over what the inputs
//     tell, for every input: a package mirror's layout often names the
//     distribution better than the package does.
//   - Workers (int): inputs, and modules of one package, read at once;
//     0 means runtime.GOMAXPROCS(0).
//   - Strict (bool): the first bad input ends the import, as its error.
//   - NoModules (bool): module BTF is left out.
//   - CacheDir (string): where the BTF pahole made from DWARF is kept,
//     keyed by the input's contents; "" means no cache.
//   - CacheVerify (bool): a cached kernel made from DWARF goes through
//     pahole again and a differing entry is replaced, with a warning, for
//     a cache restored from a less trusted source.
//   - Warn (func(error)): told of problems that do not fail the import,
//     such as a cache that cannot be read or written.
//   - Progress (func(input string, done, found int, read bool)): told how
//     the modules of a kernel made from DWARF go, minutes of pahole for a
//     debug package, for a program that would otherwise print nothing
//     that long.
type ImportOptions = icorpus.ImportOptions

// ImportResult is what [Import] did: Kernels, the [Imported] kernels
// written, sorted by key, and Skipped, one [*KernelError] per input,
// kernel or module that was not imported.
type ImportResult = icorpus.ImportResult

// Imported describes one kernel [Import] wrote: its Key (runtime.Key),
// KeyFrom (what told the key's distribution and version, such as "the
// kernel banner (+deb12)" or "the package version (6.12.118-1~deb12u1)";
// a guess unless ImportOptions.Key gave them), Input (the input it came
// from), File (the corpus file written), Bytes (its vmlinux BTF's size)
// and Modules (how many modules were written beside it).
type Imported = icorpus.Imported

// KernelError is one input, kernel or module that could not be imported:
// Path names the file and Err says what is wrong with it (no BTF, an
// unknown format, a module without its base, a key the input does not
// give, a size past the caps for untrusted input). Its Error method
// prints both; Unwrap returns Err.
type KernelError = icorpus.KernelError

// Import reads kernels from the inputs and writes them into the corpus
// rooted at dir. Each input is read once, and inputs are read in parallel.
//
// A bad input is reported in ImportResult.Skipped as a *KernelError and
// the others are still imported; with ImportOptions.Strict the first one
// ends the import and is returned as the error. Errors writing dir are
// always returned, with the ImportResult of what was written before.
func Import(ctx context.Context, dir string, inputs []string, opts *ImportOptions) (*ImportResult, error) {
	return icorpus.Import(ctx, dir, inputs, opts)
}

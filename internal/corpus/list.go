package corpus

import (
	"context"
	"errors"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/kernelkey"
)

// Summary describes one kernel of a corpus for listings.
type Summary struct {
	Key         kernelkey.Key
	Path        string
	Types       int // vmlinux types, not counting void
	Bytes       int // raw vmlinux BTF bytes
	Modules     int
	ModuleBytes int // raw module BTF bytes, all modules
}

// summarize describes a kernel read by Read.
func summarize(k *Kernel) (Summary, error) {
	spec, err := extract.ParseBTF(k.VMLinux, nil)
	if err != nil {
		return Summary{}, &KernelError{Path: k.Path, Err: err}
	}
	s := Summary{Key: k.Key, Path: k.Path, Types: countTypes(spec), Bytes: len(k.VMLinux), Modules: len(k.Modules)}
	for _, m := range k.Modules {
		s.ModuleBytes += len(m.BTF)
	}
	return s, nil
}

// List reads the corpus under roots and calls fn with each kernel's summary
// or error, in Read's order. It returns the first error fn returns, or
// ctx.Err().
func List(ctx context.Context, roots []string, opts *Options, fn func(Summary, error) error) error {
	for k, err := range Read(ctx, roots, opts) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		var s Summary
		if err == nil {
			s, err = summarize(k)
		}
		if err := fn(s, err); err != nil {
			return err
		}
	}
	return ctx.Err()
}

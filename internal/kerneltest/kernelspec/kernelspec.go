// Package kernelspec gives tests a kernel's BTF parsed by both readers the
// project compares, internal/rawbtf and cilium/ebpf, once per process and
// name. It is apart from kerneltest because rawbtf's own tests use
// kerneltest.
package kernelspec

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// Kernel is one vmlinux BTF in both readers. Spec is shared: a test that
// reads split specs over it from several goroutines takes a Copy
// (cilium/ebpf v0.22 inflates base types without the base's lock).
type Kernel struct {
	Name string
	Raw  *rawbtf.Spec
	Spec *btf.Spec
}

var cache sync.Map // name -> func() (*Kernel, error)

// Load parses raw under name, once per process: later calls with the same
// name return the first result whatever raw they pass.
func Load(name string, raw []byte) (*Kernel, error) {
	load, _ := cache.LoadOrStore(name, sync.OnceValues(func() (*Kernel, error) {
		rs, err := rawbtf.Parse(raw, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: rawbtf: %w", name, err)
		}
		spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: cilium/ebpf: %w", name, err)
		}
		return &Kernel{Name: name, Raw: rs, Spec: spec}, nil
	}))
	return load.(func() (*Kernel, error))()
}

// Must is Load failing the test on an error.
func Must(tb testing.TB, name string, raw []byte) *Kernel {
	tb.Helper()
	k, err := Load(name, raw)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

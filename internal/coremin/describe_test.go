package coremin

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// TestDescribe: relocations read as the load prediction's reasons name
// them, field paths walked in the object's BTF.
func TestDescribe(t *testing.T) {
	objs, err := Load(filepath.Join(kerneltest.Dir(), "objects", "fields-el.o"), filepath.Join(kerneltest.Dir(), "objects", "enums-el.o"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		for i := range o.Relocations {
			got = append(got, o.Describe(&o.Relocations[i]))
		}
	}
	for _, want := range []string{"byte_off task_struct.pid", "enumval_exists bpf_prog_type::BPF_PROG_TYPE_NETFILTER"} {
		if !slices.Contains(got, want) {
			t.Errorf("no relocation described as %q in %q", want, got)
		}
	}
}

package coremin

import (
	"testing"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// TestMinimizeRechecksMismatches: testdata/voidptr.c's type_matches fails
// only because of what task_struct.mm points to. Without the recheck the
// minimized BTF points mm to void and the oracle sees the relocation
// succeed; with it, nothing changes.
func TestMinimizeRechecksMismatches(t *testing.T) {
	const obj = "testdata/voidptr-el.o"
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			res := matchObjects(t, []string{obj}, raw)
			verify := func(blob []byte) []Mismatch { return verifyBlob(t, []string{obj}, full, blob) }

			naive, err := build(res, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ms := verify(naive.blobs[0]); len(ms) == 0 {
				t.Error("without the recheck the oracle sees no difference: the test object no longer tests it")
			}
			blob, _, err := Minimize(res)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range verify(blob) {
				t.Error(m)
			}
		})
	}
}

// TestMinimizeKeepsCounts: testdata/counts.c's type matches succeed with
// more local members and enumerators than the target ones they map to.
// Without the padding members and enumerators the oracle sees them fail.
func TestMinimizeKeepsCounts(t *testing.T) {
	const obj = "testdata/counts-el.o"
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			res := matchObjects(t, []string{obj}, raw)
			for ref, o := range res.Sites() {
				if o.Status != Resolved || o.Target != 1 {
					t.Fatalf("%v: %v %d, want a match", res.Objects[0].SiteString(ref.Site), o.Status, o.Target)
				}
			}
			verify := func() []Mismatch {
				blob, _, err := Minimize(res)
				if err != nil {
					t.Fatal(err)
				}
				return verifyBlob(t, []string{obj}, full, blob)
			}
			for _, m := range verify() {
				t.Error(m)
			}
			for _, tm := range res.marks {
				tm.minCount = 0
			}
			if ms := verify(); len(ms) != 2 {
				t.Errorf("without padding the oracle sees %d differences, want 2: %v", len(ms), ms)
			}
		})
	}
}

// TestMinimizeKeepsFlexArrayNotLast: testdata/flexarray.c indexes the
// zero-length array sk_buff.__cloned_offset, which is not sk_buff's last
// member: an error for cilium/ebpf. The minimized sk_buff must keep a
// member after it, or the error would vanish.
func TestMinimizeKeepsFlexArrayNotLast(t *testing.T) {
	const obj = "testdata/flexarray-el.o"
	for _, k := range kernels(t) {
		t.Run(k.name, func(t *testing.T) {
			raw, full := kernelSpecs(t, k)
			res := matchObjects(t, []string{obj}, raw)
			if o := res.Outcome(0, 0); o.Status != Failed {
				t.Fatalf("outcome %v, want failed", o.Status)
			}
			// Where the array is in the full sk_buff.
			var skb key
			arr := -1
			for _, id := range raw.TypesByEssentialName("sk_buff") {
				typ, _ := raw.Type(id)
				for i := range typ.Vlen {
					if typ.Kind == rawbtf.KindStruct && typ.Member(i).Name == "__cloned_offset" {
						skb, arr = key{0, id}, i
					}
				}
			}
			if arr < 0 {
				t.Skip("no sk_buff.__cloned_offset in this kernel")
			}
			verify := func() []Mismatch {
				blob, _, err := Minimize(res)
				if err != nil {
					t.Fatal(err)
				}
				return verifyBlob(t, []string{obj}, full, blob)
			}
			for _, m := range verify() {
				t.Error(m)
			}
			for i := range res.marks[skb].parts {
				if i > arr {
					delete(res.marks[skb].parts, i)
				}
			}
			if ms := verify(); len(ms) == 0 {
				t.Error("without the member after the array the oracle sees no difference")
			}
		})
	}
}

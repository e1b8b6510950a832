package rawbtf

import (
	"runtime"
	"sync"
	"unsafe"
	"weak"
)

// shared holds the Specs of blobs parsed with ParseShared, weakly, by the
// blob's address and length, so that a later Parse of the same bytes by a
// step that was not handed the Spec gets it back instead of indexing the
// blob again. A generate run parses each kernel's BTF when the corpus
// reads it (to report a bad file as that file's problem) and again when
// corereloc indexes it for matching: the second parse was 5-6 % of a cold
// run's CPU. A live Spec keeps its blob alive, so no other blob can be at
// the address of an entry whose Spec is live.
var shared sync.Map // sharedKey -> weak.Pointer[Spec]

type sharedKey struct {
	data uintptr
	n    int
}

func keyOf(data []byte) sharedKey {
	return sharedKey{uintptr(unsafe.Pointer(unsafe.SliceData(data))), len(data)}
}

// ParseShared parses standalone BTF as Parse does and lets Parse and
// ParseShared find the result again, for as long as the Spec is alive,
// when they are given the same slice. data must never be modified
// afterwards: neither reads the bytes again to check.
func ParseShared(data []byte) (*Spec, error) {
	if s := sharedSpec(data); s != nil {
		return s, nil
	}
	s, err := parse(data, nil)
	if err != nil {
		return nil, err
	}
	k, p := keyOf(data), weak.Make(s)
	shared.Store(k, p)
	runtime.AddCleanup(s, func(k sharedKey) { shared.CompareAndDelete(k, p) }, k)
	return s, nil
}

// sharedSpec is the live Spec ParseShared made of data, or nil.
func sharedSpec(data []byte) *Spec {
	if p, ok := shared.Load(keyOf(data)); ok {
		return p.(weak.Pointer[Spec]).Value()
	}
	return nil
}

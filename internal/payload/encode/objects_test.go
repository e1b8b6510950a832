package encode_test

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
	"github.com/btfembed/btfembed/internal/relodigest"
)

// familyEntries are the testdata kernels plus two more builds of
// 6.1.0-47-amd64's family, with its BTF.
func familyEntries(tb testing.TB) ([]encode.Entry, kernelkey.Family) {
	entries := payloadtest.Entries(tb)
	i := slices.IndexFunc(entries, func(e encode.Entry) bool { return e.Key.Release == "6.1.0-47-amd64" })
	f, _, ok := kernelkey.FamilyOf(entries[i].Key)
	if !ok {
		tb.Fatal("6.1.0-47-amd64 has no family")
	}
	for _, abi := range []uint64{50, 53} {
		e := entries[i]
		e.Key = f.Key(abi)
		entries = append(entries, e)
	}
	return entries, f
}

// TestEncodeObjectsFamilies: the objects and families given are what the
// payload reads back, sorted, whatever their order.
func TestEncodeObjectsFamilies(t *testing.T) {
	entries, f := familyEntries(t)
	objects := []payload.ObjectRecordDigests{
		{Name: "b.o", Programs: []payload.ProgramDigest{{Name: "z", Digest: relodigest.Digest{9}}, {Name: "a", Digest: relodigest.Digest{8}}}},
		{Name: "a.o", Programs: []payload.ProgramDigest{{Name: "p", Digest: relodigest.Digest{7}}}},
	}
	families := []payload.FamilyRecord{{Family: f, ABIs: []uint64{53, 47, 50}}}
	var want []byte
	for range 3 {
		var b bytes.Buffer
		if err := encode.Write(&b, &encode.Payload{Entries: entries, Objects: objects, Families: families}, nil); err != nil {
			t.Fatal(err)
		}
		if want != nil && !bytes.Equal(b.Bytes(), want) {
			t.Fatal("the payload depends on the order of objects and programs")
		}
		want = b.Bytes()
		rand.Shuffle(len(objects), func(i, j int) { objects[i], objects[j] = objects[j], objects[i] })
		slices.Reverse(objects[0].Programs)
	}
	p := open(t, want)
	gotObjects, err := p.Objects(nil)
	if err != nil || len(gotObjects) != 2 || gotObjects[0].Name != "a.o" || gotObjects[1].Programs[0].Name != "a" || gotObjects[1].Programs[0].Digest != (relodigest.Digest{8}) {
		t.Errorf("objects %v, %v", gotObjects, err)
	}
	gotFamilies, err := p.Families(nil)
	if err != nil || len(gotFamilies) != 1 || gotFamilies[0].Family != f || !slices.Equal(gotFamilies[0].ABIs, []uint64{47, 50, 53}) {
		t.Errorf("families %v, %v", gotFamilies, err)
	}
}

// TestEncodeObjectsFamiliesRefused: what the reader would refuse, Write
// refuses, saying what.
func TestEncodeObjectsFamiliesRefused(t *testing.T) {
	entries, f := familyEntries(t)
	prog := []payload.ProgramDigest{{Name: "p"}}
	other := f
	other.Flavour = "-cloud-amd64"
	bad := f
	bad.Series = "6"
	for _, tc := range []struct {
		name string
		in   encode.Payload
		want string
	}{
		{"object twice", encode.Payload{Objects: []payload.ObjectRecordDigests{{Name: "a.o", Programs: prog}, {Name: "a.o", Programs: prog}}}, "listed twice"},
		{"no program", encode.Payload{Objects: []payload.ObjectRecordDigests{{Name: "a.o"}}}, "no program"},
		{"program twice", encode.Payload{Objects: []payload.ObjectRecordDigests{{Name: "a.o", Programs: append(prog, prog...)}}}, "repeated"},
		{"unprintable object", encode.Payload{Objects: []payload.ObjectRecordDigests{{Name: "a\n.o", Programs: prog}}}, "unprintable"},
		{"member not embedded", encode.Payload{Families: []payload.FamilyRecord{{Family: f, ABIs: []uint64{47, 48}}}}, "6.1.0-48-amd64 (debian 12) is not embedded"},
		{"one member", encode.Payload{Families: []payload.FamilyRecord{{Family: f, ABIs: []uint64{47}}}}, "two or more"},
		{"member twice", encode.Payload{Families: []payload.FamilyRecord{{Family: f, ABIs: []uint64{47, 47}}}}, "two or more"},
		{"family twice", encode.Payload{Families: []payload.FamilyRecord{{Family: f, ABIs: []uint64{47, 50}}, {Family: f, ABIs: []uint64{50, 53}}}}, "listed twice"},
		{"invalid family", encode.Payload{Families: []payload.FamilyRecord{{Family: bad, ABIs: []uint64{47, 50}}}}, "invalid"},
		{"other flavour", encode.Payload{Families: []payload.FamilyRecord{{Family: other, ABIs: []uint64{47, 50}}}}, "not embedded"},
	} {
		tc.in.Entries = entries
		err := encode.Write(&bytes.Buffer{}, &tc.in, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

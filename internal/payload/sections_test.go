package payload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/relodigest"
)

var (
	testObjects = []ObjectRecordDigests{
		{Name: "bpf_arm64_bpfel.o", Programs: []ProgramDigest{{"count_exec", relodigest.Digest{1}}, {"handle_exec", relodigest.Digest{2}}}},
		{Name: "bpf_x86_bpfel.o", Programs: []ProgramDigest{{"count_exec", relodigest.Digest{3}}, {"handle_exec", relodigest.Digest{4}}}},
	}
	amd64        = kernelkey.Family{Arch: "x86_64", Distro: "debian", Version: "12", Series: "6.1.0", Flavour: "-amd64"}
	cloud        = kernelkey.Family{Arch: "x86_64", Distro: "debian", Version: "12", Series: "6.1.0", Flavour: "-cloud-amd64"}
	testFamilies = []FamilyRecord{{Family: amd64, ABIs: []uint64{47, 50, 53}}, {Family: cloud, ABIs: []uint64{0, 1 << 40}}}
)

// TestSections: the objects and families sections read back what was
// written, and refuse, wrapping ErrCorrupt, what the writer never writes.
func TestSections(t *testing.T) {
	objs, err := readObjects(marshalObjects(testObjects), nil)
	if err != nil || len(objs) != 2 || objs[1].Programs[1] != testObjects[1].Programs[1] {
		t.Fatalf("objects read back as %v, %v", objs, err)
	}
	fams, err := readFamilies(marshalFamilies(testFamilies), nil)
	if err != nil || len(fams) != 2 || fams[0].Family != amd64 || fams[1].ABIs[1] != 1<<40 {
		t.Fatalf("families read back as %v, %v", fams, err)
	}
	if marshalObjects(nil) != nil || marshalFamilies(nil) != nil {
		t.Error("an empty section is not nil")
	}

	u := func(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
	s := func(b []byte, v string) []byte { return append(u(b, uint64(len(v))), v...) }
	object := func(name string, progs ...string) []byte {
		b := u(s(nil, name), uint64(len(progs)))
		for _, p := range progs {
			b = append(s(b, p), make([]byte, relodigest.Size)...)
		}
		return b
	}
	family := func(f kernelkey.Family, abis ...uint64) []byte {
		var b []byte
		for _, v := range []string{f.Arch, f.Distro, f.Version, f.Series, f.Flavour} {
			b = s(b, v)
		}
		b = u(b, uint64(len(abis)))
		for _, a := range abis {
			b = u(b, a)
		}
		return b
	}
	bad := amd64
	bad.Flavour = "amd64"
	for _, tc := range []struct {
		name string
		raw  []byte
		read func([]byte) error
	}{
		{"no object", u(nil, 0), nil},
		{"object without program", append(u(nil, 1), object("a.o")...), nil},
		{"unsorted objects", append(append(u(nil, 2), object("b.o", "p")...), object("a.o", "p")...), nil},
		{"object twice", append(append(u(nil, 2), object("a.o", "p")...), object("a.o", "p")...), nil},
		{"unsorted programs", append(u(nil, 1), object("a.o", "q", "p")...), nil},
		{"unprintable program", append(u(nil, 1), object("a.o", "p\x1b[2J")...), nil},
		{"digest truncated", append(u(nil, 1), object("a.o", "p")...)[:12], nil},
		{"trailing bytes", append(append(u(nil, 1), object("a.o", "p")...), 0), nil},
		{"count past the end", u(nil, 1000), nil},
		{"no family", u(nil, 0), familiesOnly},
		{"one member", append(u(nil, 1), family(amd64, 47)...), familiesOnly},
		{"invalid family", append(u(nil, 1), family(bad, 47, 0)...), familiesOnly},
		{"unsorted families", append(append(u(nil, 2), family(cloud, 1, 0)...), family(amd64, 1, 0)...), familiesOnly},
		{"member overflows", append(u(nil, 1), family(amd64, 1<<63, 1<<63)...), familiesOnly},
		{"family truncated", append(u(nil, 1), family(amd64, 47, 0)...)[:9], familiesOnly},
	} {
		read := tc.read
		if read == nil {
			read = objectsOnly
		}
		if err := read(tc.raw); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func objectsOnly(raw []byte) error {
	_, err := readObjects(raw, nil)
	return err
}

func familiesOnly(raw []byte) error {
	_, err := readFamilies(raw, nil)
	return err
}

// FuzzSections feeds mutated objects and families sections to their
// readers: an error must wrap ErrCorrupt, and what they accept must
// encode back to the same bytes.
func FuzzSections(f *testing.F) {
	f.Add(marshalObjects(testObjects), false)
	f.Add(marshalFamilies(testFamilies), true)
	f.Fuzz(func(t *testing.T, raw []byte, fams bool) {
		var back []byte
		var err error
		if fams {
			var fs []FamilyRecord
			if fs, err = readFamilies(raw, nil); err == nil {
				back = marshalFamilies(fs)
			}
		} else {
			var os []ObjectRecordDigests
			if os, err = readObjects(raw, nil); err == nil {
				back = marshalObjects(os)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(back, raw) {
			t.Fatalf("accepted %x, which encodes back as %x", raw, back)
		}
	})
}

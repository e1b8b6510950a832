package encode_test

import (
	"archive/tar"
	"bytes"
	"math/rand/v2"
	"os/exec"
	"slices"
	"testing"

	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// TestEncodeBasedDictionaries adds BTF unlike the kernels' (cilium/ebpf's
// btf_testmod, 32-byte headers so stored unpacked) so that it starts a
// second dictionary, stored against the first; every blob must still
// decode to its input.
func TestEncodeBasedDictionaries(t *testing.T) {
	entries := multiDictEntries(t)
	b := payloadtest.Encode(t, entries, &encode.Options{MaxDictSize: 1})
	all, err := payloadtest.All(open(t, b), nil)
	if err != nil {
		t.Fatal(err)
	}
	based := false
	for _, e := range all {
		based = based || e.VMLinux.DictBase.ID != 0
	}
	if !based {
		t.Fatal("no dictionary stored against another")
	}
	p := open(t, b)
	for _, e := range entries {
		raw, err := p.Blob(entry(t, p, e.Key).VMLinux, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, e.VMLinux) {
			t.Errorf("%s: decoded blob differs from the input", e.Key)
		}
	}
}

func TestEncodeDeterministic(t *testing.T) {
	entries := payloadtest.Entries(t)
	want := payloadtest.Encode(t, entries, nil)
	shuffled := slices.Clone(entries)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if got := payloadtest.Encode(t, shuffled, nil); !bytes.Equal(got, want) {
		t.Fatal("payload depends on entry order")
	}
}

// TestEncodeDedup embeds the same BTF under a second key: the payload may
// grow by index bytes, not by another copy of the blob.
func TestEncodeDedup(t *testing.T) {
	entries := payloadtest.Entries(t)
	once := payloadtest.Encode(t, entries, nil)
	dup := entries[0]
	dup.Key.Distro = "ubuntu"
	twice := payloadtest.Encode(t, append(slices.Clone(entries), dup), nil)
	if grew := len(twice) - len(once); grew > 64 {
		t.Errorf("payload grew by %d bytes for a duplicate blob", grew)
	}
	p := open(t, twice)
	b1, err := p.Blob(entry(t, p, entries[0].Key).VMLinux, nil)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := p.Blob(entry(t, p, dup.Key).VMLinux, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, entries[0].VMLinux) || !bytes.Equal(b2, entries[0].VMLinux) {
		t.Error("duplicate entries decode differently")
	}
}

func TestEncodeRejects(t *testing.T) {
	e := payloadtest.Entries(t)[0]
	noRelease := e
	noRelease.Key.Release = ""
	badModule := e
	badModule.Modules = []encode.Module{{Name: "../etc", Split: e.VMLinux}}
	noBTF := e
	noBTF.VMLinux = nil
	for name, entries := range map[string][]encode.Entry{
		"duplicate key": {e, e},
		"no release":    {noRelease},
		"module name":   {badModule},
		"no vmlinux":    {noBTF},
	} {
		if err := encode.Write(&bytes.Buffer{}, &encode.Payload{Entries: entries}, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// tarXZ returns the size of `tar c | xz -9` of the entries' vmlinux BTF,
// one tar per group, summed; ok is false without an xz binary.
func tarXZ(tb testing.TB, groups [][]encode.Entry) (size int, ok bool) {
	tb.Helper()
	xz, err := exec.LookPath("xz")
	if err != nil {
		return 0, false
	}
	for _, g := range groups {
		var tarball bytes.Buffer
		tw := tar.NewWriter(&tarball)
		for _, e := range g {
			name := e.Key.Distro + "/" + e.Key.Version + "/" + e.Key.Arch + "/" + e.Key.Release + ".btf"
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(e.VMLinux))}); err != nil {
				tb.Fatal(err)
			}
			if _, err := tw.Write(e.VMLinux); err != nil {
				tb.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			tb.Fatal(err)
		}
		cmd := exec.Command(xz, "-9", "-c")
		cmd.Stdin = &tarball
		out, err := cmd.Output()
		if err != nil {
			tb.Fatal(err)
		}
		size += len(out)
	}
	return size, true
}

// TestPayloadSmallerThanTarXZ holds the payload to its goal: smaller than
// a solid `tar | xz -9` of the same minimized BTF.
func TestPayloadSmallerThanTarXZ(t *testing.T) {
	entries := payloadtest.Entries(t)
	solid, ok := tarXZ(t, [][]encode.Entry{entries})
	if !ok {
		t.Skip("no xz binary")
	}
	payload := len(payloadtest.Encode(t, entries, nil))
	t.Logf("%d kernels: payload %d bytes, tar | xz -9 %d bytes", len(entries), payload, solid)
	if payload >= solid {
		t.Errorf("payload of %d bytes is not smaller than tar | xz -9 (%d bytes)", payload, solid)
	}
}

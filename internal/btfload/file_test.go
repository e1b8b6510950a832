package btfload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/regfile"
)

// TestFile reads every blob of TestSpecLoadsAsPlain from a file: the
// bytes are the file's, the index is rawbtf's of them, and the spec
// decodes what btf.LoadSpecFromReader decodes, data sections of size zero
// included.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	for i, b := range blobs(t) {
		t.Run(b.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.Repeat("x", i+1))
			if err := os.WriteFile(path, b.raw, 0o644); err != nil {
				t.Fatal(err)
			}
			spec, raw, index, err := File(path, int64(len(b.raw)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(raw, b.raw) {
				t.Fatal("the bytes differ from the file's")
			}
			if !bytes.Equal(index.Raw(), raw) {
				t.Error("the index is not of the bytes")
			}
			want, err := btf.LoadSpecFromReader(bytes.NewReader(b.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(encode(t, spec), encode(t, want)) {
				t.Fatal("File decodes other types than btf.LoadSpecFromReader")
			}
		})
	}
}

// TestFileShares checks what File is for: cilium/ebpf decodes from the
// very bytes File returns, so they are in memory once. The test writes
// into them, which no caller may do.
func TestFileShares(t *testing.T) {
	b := blobs(t)[0] // a kernel
	path := filepath.Join(t.TempDir(), "vmlinux.btf")
	if err := os.WriteFile(path, b.raw, 0o644); err != nil {
		t.Fatal(err)
	}
	spec, raw, index, err := File(path, int64(len(b.raw)))
	if err != nil {
		t.Fatal(err)
	}
	id := index.LookupEssentialNames([]string{"task_struct"})["task_struct"]
	if len(id) != 1 {
		t.Fatalf("task_struct: IDs %v", id)
	}
	// Rename task_struct in place to xask_struct, before cilium/ebpf
	// decodes it.
	at := bytes.Index(raw, []byte("\x00task_struct\x00"))
	if at < 0 {
		t.Fatal("no task_struct in the string table")
	}
	raw[at+1] = 'x'
	got, err := spec.TypeByID(btf.TypeID(id[0]))
	if err != nil {
		t.Fatal(err)
	}
	if got.TypeName() != "xask_struct" {
		t.Fatalf("cilium/ebpf decodes %q from a buffer of its own: File no longer saves the copy", got.TypeName())
	}
}

// TestFileRefuses: what is not raw BTF whole is refused, for the caller
// to read the usual way; the file checks are internal/regfile's
// (TestReadFile), and apply.
func TestFileRefuses(t *testing.T) {
	dir := t.TempDir()
	notBTF := filepath.Join(dir, "not-btf")
	if err := os.WriteFile(notBTF, []byte("\x7fELF and so on"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated")
	if err := os.WriteFile(truncated, blobs(t)[0].raw[:4096], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		limit      int64
		is         error
		want       string
	}{
		{"not BTF", notBTF, 1 << 20, ErrNotWhole, "no BTF magic"},
		{"directory", dir, 1 << 20, nil, "not a regular file"},
		{"too large", notBTF, 4, regfile.ErrTooLarge, "more than"},
		{"truncated", truncated, 1 << 20, nil, "truncated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := File(c.path, c.limit)
			if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("error %v, want one containing %q (wrapping %v)", err, c.want, c.is)
			}
		})
	}
}

// TestFileInPieces: a blob of 10 MiB or more is one that debug/elf reads
// in chunks (internal/saferio), so no single read shows cilium/ebpf's
// buffer, and File refuses it for its caller to read the usual way. The
// blob is a kernel's with 8 MiB of empty strings appended.
func TestFileInPieces(t *testing.T) {
	raw := bytes.Clone(blobs(t)[0].raw)
	if binary.LittleEndian.Uint16(raw) != rawbtf.Magic {
		t.Skip("the first test kernel is not little-endian")
	}
	strOff, strLen := binary.LittleEndian.Uint32(raw[16:]), binary.LittleEndian.Uint32(raw[20:])
	hdrLen := binary.LittleEndian.Uint32(raw[4:])
	if int(hdrLen+strOff+strLen) != len(raw) {
		t.Fatal("the string section is not last")
	}
	raw = append(raw, make([]byte, 8<<20)...)
	binary.LittleEndian.PutUint32(raw[20:], strLen+8<<20)
	if _, err := btf.LoadSpecFromReader(bytes.NewReader(raw)); err != nil {
		t.Fatalf("cilium/ebpf refuses the grown blob: %v", err)
	}
	path := filepath.Join(t.TempDir(), "big.btf")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := File(path, 64<<20); !errors.Is(err, ErrNotWhole) {
		t.Fatalf("File of %d MiB: %v, want ErrNotWhole", len(raw)>>20, err)
	}
	// What File's bound stands for: no single read fills the section.
	w := newWrapper(bytes.NewReader(raw), int64(len(raw)), binary.LittleEndian)
	if _, err := btf.LoadSpecFromReader(w); err != nil {
		t.Fatal(err)
	}
	if w.whole != nil {
		t.Errorf("one read filled a %d MiB section: debug/elf no longer reads it in chunks, and File could take it", len(raw)>>20)
	}
}

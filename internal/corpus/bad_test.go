package corpus

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/extract"
	"github.com/btfembed/btfembed/internal/extract/extracttest"
)

// tarXZ builds a .tar.xz holding the given members, in order.
func tarXZ(tb testing.TB, members ...extracttest.Section) []byte {
	tb.Helper()
	return extracttest.Compressors[extract.FormatXZ](tb, extracttest.Tar(members...))
}

// brokenBTF is real kernel BTF whose first type has an undefined kind.
func brokenBTF(tb testing.TB) []byte {
	b := bytes.Clone(hubBTF(tb, testKernels[2].key))
	hdrLen := binary.LittleEndian.Uint32(b[4:])
	typeOff := binary.LittleEndian.Uint32(b[8:])
	info := b[hdrLen+typeOff+4:]
	binary.LittleEndian.PutUint32(info, binary.LittleEndian.Uint32(info)|0x1f<<24)
	return b
}

// nameInsideBTF is real kernel BTF whose second type, FUNC verify_cpu,
// has its name offset one byte into its name ("erify_cpu"): within the
// string section, as libbpf asks, but not at a string's start, which
// cilium/ebpf refuses when it decodes the type (rawbtf's insideString).
func nameInsideBTF(tb testing.TB) []byte {
	tb.Helper()
	b := bytes.Clone(hubBTF(tb, testKernels[2].key))
	le := binary.LittleEndian
	types := b[le.Uint32(b[4:])+le.Uint32(b[8:]):]
	if info := le.Uint32(types[4:]); info != 13<<24 {
		tb.Fatalf("type 1 has info %#x, want an empty FUNC_PROTO", info)
	}
	le.PutUint32(types[12:], le.Uint32(types[12:])+1) // type 2's name
	return b
}

// TestReadBadInputs lays out a corpus with one good kernel and one of each
// kind of bad input the issue lists: each must give one error naming its
// file and the reason, and the good kernel must still come through.
func TestReadBadInputs(t *testing.T) {
	good := testKernels[2].key // the smallest archive
	dir := t.TempDir()
	arch := filepath.Join(dir, "debian", "12", "x86_64")
	hub := filepath.Join(testCorpus, good.Distro, good.Version, good.Arch, good.Release+".btf.tar.xz")
	copyFile(t, hub, filepath.Join(arch, good.Release+".btf.tar.xz"))
	archive := hubFile(t, good)

	bad := []struct {
		file string
		data []byte
		is   error
		want string
	}{
		{"a-truncated.btf.tar.xz", archive[:len(archive)/2], nil, "xz: "},
		{"b-no-member.btf.tar.xz", tarXZ(t, extracttest.Section{Name: "README", Data: []byte("hello")}), errNoBTF, "tarball has no .btf member"},
		{"c-empty.btf.tar.xz", tarXZ(t), errNoBTF, "empty tarball"},
		{"d-zero-bytes.btf.tar.xz", nil, errUnknownFormat, "unknown file format"},
		{"e-not-btf.btf", []byte("this is not BTF at all, just some text"), nil, "not BTF"},
		{"f-broken.btf", brokenBTF(t), nil, "parse BTF"},
		{"f-name-inside.btf", nameInsideBTF(t), nil, `parse BTF: type 2: func: name offset 2 points inside the string "verify_cpu", not at its start`},
		{"vmlinux-g-no-btf", extracttest.MakeELF(elf.EM_X86_64, extracttest.Section{Name: ".rodata", Data: []byte(extracttest.Banner)}), errNoBTF, "CONFIG_DEBUG_INFO_BTF"},
		{"h-orphan.modules/nvme.ko.xz", nil, errNoBase, "no kernel x86_64/h-orphan (debian 12) beside it"},
		{good.Release + ".modules/not-a-module.ko", []byte("garbage"), errUnknownFormat, "module is not ELF"},
		{good.Release + ".modules/nvme.btf", []byte("\x9f\xeb\x01\x00garbage"), nil, "BTF header: "},
		{good.Release + ".modules/virtio_net.ko.xz", nil, nil, "split BTF over the kernel's vmlinux"},
	}
	for _, b := range bad {
		data := b.data
		if data == nil && strings.HasSuffix(b.file, ".ko.xz") {
			// A module of another kernel: its split BTF does not fit this base.
			copyFile(t, filepath.Join(extraModules(testKernels[3].key), filepath.Base(b.file)), filepath.Join(arch, b.file))
			continue
		}
		writeFile(t, filepath.Join(arch, b.file), data)
	}

	kernels, errs := collect(t, []string{dir}, nil)
	if len(kernels) != 1 || kernels[0].Key != good || len(kernels[0].Modules) != 0 {
		t.Fatalf("kernels %v, want only %v without modules", kernels, good)
	}
	for _, err := range errs {
		t.Log(err)
	}
	if len(errs) != len(bad) {
		t.Errorf("%d errors, want %d:", len(errs), len(bad))
		for _, err := range errs {
			t.Log(err)
		}
	}
	for _, b := range bad {
		path := filepath.Join(arch, b.file)
		if strings.HasPrefix(b.file, "h-orphan") {
			path = filepath.Dir(path)
		}
		found := false
		for _, err := range errs {
			var ke *KernelError
			if !errors.As(err, &ke) || ke.Path != path {
				continue
			}
			found = true
			if b.is != nil && !errors.Is(err, b.is) {
				t.Errorf("%s: error %q does not wrap %v", b.file, err, b.is)
			}
			if !strings.Contains(err.Error(), b.want) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("%s: error %q does not name the file and say %q", b.file, err, b.want)
			}
		}
		if !found {
			t.Errorf("%s: no error", b.file)
		}
	}

	t.Run("strict", func(t *testing.T) {
		kernels, errs := collect(t, []string{dir}, &Options{Strict: true})
		if len(errs) != 1 || len(kernels) != 0 {
			t.Fatalf("strict: %d kernels and errors %v, want the first error alone", len(kernels), errs)
		}
	})
}

func TestReadMissingRoot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, errs := collect(t, []string{missing}, nil)
	var ke *KernelError
	if len(errs) != 1 || !errors.As(errs[0], &ke) || ke.Path != missing {
		t.Fatalf("errors %v, want one naming %s", errs, missing)
	}
}

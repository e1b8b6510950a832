package corpus

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestOneReader is issue 18's plain tar named .btf.tar.xz: min, inspect and
// import read it (ReadBTF) while ls and generate (Read) failed with "xz:
// file format not recognized". Every form of the file is now read by both
// the same way, to the same BTF.
func TestOneReader(t *testing.T) {
	k := testKernels[1].key
	want := hubBTF(t, k)
	tarball := unxz(t, hubFile(t, k))
	for name, data := range map[string][]byte{
		"xz tarball":    hubFile(t, k),
		"plain tarball": tarball,
		"raw BTF":       want,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, k.Distro, k.Version, k.Arch, k.Release+btfhubSuffix)
			writeFile(t, p, data)
			f, err := ReadBTF(p)
			if err != nil {
				t.Fatalf("ReadBTF: %v", err)
			}
			kernels, errs := collect(t, []string{root}, nil)
			if len(errs) > 0 || len(kernels) != 1 {
				t.Fatalf("Read: %d kernels, errors %v", len(kernels), errs)
			}
			if !bytes.Equal(f.BTF, want) || !bytes.Equal(kernels[0].VMLinux, want) || kernels[0].Key != k {
				t.Errorf("ReadBTF and Read disagree with the archive's BTF (key %s)", kernels[0].Key)
			}
		})
	}
}

package distill_test

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"

	"github.com/cilium/ebpf/btf"
	"github.com/ulikunitz/xz"

	"github.com/btfembed/btfembed/distill"
)

// btfhubBTF reads the raw vmlinux BTF out of a BTFHub archive
// (<release>.btf.tar.xz, a tar of one <release>.btf).
func btfhubBTF(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	xr, err := xz.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(xr)
	if _, err := tr.Next(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(io.LimitReader(tr, 64<<20))
}

// moduleBTF reads a module's split BTF, its .BTF section.
func moduleBTF(path string) ([]byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sec := f.Section(".BTF")
	if sec == nil {
		return nil, fmt.Errorf("%s: no .BTF section", path)
	}
	return sec.Data()
}

// Separate a kernel module's BTF from the vmlinux BTF it was built over,
// then move it onto a vmlinux BTF, here the same one, as an agent does with
// the BTF of the kernel it runs on.
func Example() {
	vmlinux, err := btfhubBTF("../testdata/btfhub/debian/12/arm64/6.1.0-57-arm64.btf.tar.xz")
	if err != nil {
		fmt.Println(err)
		return
	}
	module, err := moduleBTF("../testdata/corpus-extra/debian/12/arm64/6.1.0-57-arm64.modules/virtio_net.ko")
	if err != nil {
		fmt.Println(err)
		return
	}
	base, err := distill.NewBase(vmlinux)
	if err != nil {
		fmt.Println(err)
		return
	}
	distilledBase, split, err := distill.Distill(module, base)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("module BTF: %d bytes over %d bytes of vmlinux BTF\n", len(module), len(vmlinux))
	fmt.Printf("distilled: %d bytes of base, %d bytes of split BTF\n", len(distilledBase), len(split))

	vmlinuxSpec, err := btf.LoadSpecFromReader(bytes.NewReader(vmlinux))
	if err != nil {
		fmt.Println(err)
		return
	}
	relocated, err := distill.Relocate(split, distilledBase, base, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(relocated), vmlinuxSpec)
	if err != nil {
		fmt.Println(err)
		return
	}
	var dev *btf.Struct
	if err := spec.TypeByName("virtnet_info", &dev); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("relocated: %s, %d bytes\n", dev.TypeName(), dev.Size)
	// Output:
	// module BTF: 7344 bytes over 4831195 bytes of vmlinux BTF
	// distilled: 1189 bytes of base, 9594 bytes of split BTF
	// relocated: virtnet_info, 304 bytes
}

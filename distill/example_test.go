package distill_test

import (
	"bytes"
	"fmt"

	"github.com/cilium/ebpf/btf"

	"github.com/btfembed/btfembed/distill"
	"github.com/btfembed/btfembed/internal/corpus"
)

// Separate a kernel module's BTF from the vmlinux BTF it was built over,
// then move it onto a vmlinux BTF, here the same one, as an agent does with
// the BTF of the kernel it runs on.
func Example() {
	vmlinux, err := corpus.ReadBTF("../testdata/btfhub/debian/12/arm64/6.1.0-57-arm64.btf.tar.xz")
	if err != nil {
		fmt.Println(err)
		return
	}
	module, err := corpus.ReadBTF("../testdata/corpus-extra/debian/12/arm64/6.1.0-57-arm64.modules/virtio_net.ko")
	if err != nil {
		fmt.Println(err)
		return
	}
	base, err := distill.NewBase(vmlinux.BTF)
	if err != nil {
		fmt.Println(err)
		return
	}
	distilledBase, split, err := distill.Distill(module.BTF, base)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("module BTF: %d bytes over %d bytes of vmlinux BTF\n", len(module.BTF), len(vmlinux.BTF))
	fmt.Printf("distilled: %d bytes of base, %d bytes of split BTF\n", len(distilledBase), len(split))

	vmlinuxSpec, err := btf.LoadSpecFromReader(bytes.NewReader(vmlinux.BTF))
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

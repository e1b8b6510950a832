package corpus_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/btfembed/btfembed/generator/corpus"
)

// Import a kernel's BTF into a new corpus and show, as
// `btfembed corpus import` does, where each kernel went and what told its
// key, so that a wrong guess is seen before the generator embeds it. The
// first input is a BTFHub archive (a .deb, an .rpm, a kernel image or a
// vmlinux goes the same way); the second holds no BTF, so it is skipped,
// and the first is imported all the same.
func ExampleImport() {
	dir, err := os.MkdirTemp("", "corpus")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	inputs := []string{
		"../../testdata/btfhub/debian/12/arm64/6.1.0-57-arm64.btf.tar.xz",
		"doc.go",
	}
	res, err := corpus.Import(context.Background(), dir, inputs, &corpus.ImportOptions{NoModules: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, k := range res.Kernels {
		file, err := filepath.Rel(dir, k.File)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s from %s: %s, %d bytes of BTF\n", k.Key, k.KeyFrom, file, k.Bytes)
	}
	for _, err := range res.Skipped {
		var ke *corpus.KernelError
		if errors.As(err, &ke) {
			fmt.Printf("skipped %s: %v\n", ke.Path, ke.Err)
		}
	}
	// Output:
	// arm64/6.1.0-57-arm64 (debian 12) from its BTFHub path: debian/12/arm64/6.1.0-57-arm64.btf.tar.xz, 4831195 bytes of BTF
	// skipped doc.go: unknown file format: not BTF, ELF, a kernel image or a compressed stream
}

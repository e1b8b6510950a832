package corpus_test

import (
	"context"
	"fmt"

	"github.com/btfembed/btfembed/internal/corpus"
)

// Read streams the kernels of a BTFHub-layout corpus in key order; a bad
// file is an error in the stream, not the end of it.
func ExampleRead() {
	opts := &corpus.Options{Arch: []string{"amd64"}, Release: "6.1.*"}
	for k, err := range corpus.Read(context.Background(), []string{"../../testdata/btfhub"}, opts) {
		if err != nil {
			fmt.Println("skipped:", err)
			continue
		}
		fmt.Println(k.Key, len(k.VMLinux), "bytes of BTF,", len(k.Modules), "modules")
	}
	// Output:
	// x86_64/6.1.0-47-amd64 (debian 12) 4350808 bytes of BTF, 0 modules
	// x86_64/6.1.0-50-cloud-amd64 (debian 12) 4111222 bytes of BTF, 0 modules
}

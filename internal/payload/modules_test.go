package payload

import (
	"errors"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// TestEntryModulesListed: an entry's module must be in the directory's
// list for its architecture, where a reader finds them without a block.
func TestEntryModulesListed(t *testing.T) {
	key := kernelkey.Key{Arch: "x86_64", Release: "6.1.0"}
	ix := Index{
		Blobs:   []BlobRecord{{Codec: CodecStored, N: 1, RawLen: 1}},
		Entries: []EntryRecord{{Key: key, Modules: []ModuleRecord{{Name: "m"}}}},
	}
	_, blocks, _ := ix.Marshal(1)
	for _, tc := range []struct {
		modules map[string][]string
		ok      bool
	}{
		{map[string][]string{"x86_64": {"a", "m"}}, true},
		{map[string][]string{}, false},
		{map[string][]string{"x86_64": {"n"}}, false},
		{map[string][]string{"arm64": {"m"}}, false},
	} {
		_, err := readBlock(0, blocks[0], key, nil, 1, &directory{modules: tc.modules}, nil)
		if tc.ok && err != nil {
			t.Errorf("directory %v: %v", tc.modules, err)
		}
		if !tc.ok && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "module m is not in the directory's list")) {
			t.Errorf("directory %v: error %v, want ErrCorrupt naming module m", tc.modules, err)
		}
	}
}

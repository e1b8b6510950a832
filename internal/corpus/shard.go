package corpus

import (
	"hash/fnv"
	"path/filepath"

	"github.com/btfembed/btfembed/internal/kernelkey"
)

// shardOf returns the shard, out of n, that a corpus entry belongs to: a
// hash of the key its path gives, or of the path itself when the path
// tells no release (a file named vmlinux). Each entry's shard depends on
// that entry alone, so adding kernels to a corpus moves no other kernel to
// another shard, and the split is the same on every machine that sees the
// same layout.
func shardOf(key kernelkey.Key, path string, n int) int {
	h := fnv.New64a()
	if key.Release != "" {
		h.Write([]byte(key.String()))
	} else {
		h.Write([]byte(filepath.ToSlash(path)))
	}
	return int(h.Sum64() % uint64(n))
}

func (o *Options) inShard(e entry) bool {
	if o == nil || o.Shards <= 1 {
		return true
	}
	return shardOf(e.key, e.path, o.Shards) == o.Shard
}

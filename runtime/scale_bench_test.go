package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// BenchmarkSelectScale is BenchmarkSelectEmbedded's start-up cost (Open,
// then Select of one kernel, forced embedded) as the number of kernels in
// the payload grows, with Open alone beside it: Open decodes the header
// and the block directory, Select one block of the index, then one entry
// and its dictionary; both should stay flat. Synthetic payloads
// repeat the testdata entries under distinct releases;
// $BTFEMBED_BENCH_PAYLOADS (a list of payload files, as generate writes
// for internal/cmd/benchcorpus corpora) measures real ones instead,
// selecting the middle kernel of each.
func BenchmarkSelectScale(b *testing.B) {
	if env := os.Getenv("BTFEMBED_BENCH_PAYLOADS"); env != "" {
		for _, p := range filepath.SplitList(env) {
			payload, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			a := open(b, payload)
			keys, err := a.Kernels()
			if err != nil {
				b.Fatal(err)
			}
			benchSelect(b, fmt.Sprintf("%s/kernels=%d", filepath.Base(p), len(keys)), payload, keys[len(keys)/2])
		}
		return
	}
	for _, n := range []int{10, 100, 1000, 4000} {
		entries := payloadtest.Many(b, n)
		benchSelect(b, fmt.Sprintf("kernels=%d", n), payloadtest.Encode(b, entries, nil), entries[n/2].Key)
	}
}

func benchSelect(b *testing.B, name string, payload []byte, key Key) {
	opts := &SelectOptions{ForceEmbedded: true, Arch: key.Arch, Release: key.Release, Distro: key.Distro, Version: key.Version}
	if opts.Distro == "" {
		opts.Distro = "none" // skip the host's os-release
	}
	b.Run(name+"/open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Open(payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/open+select", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a, err := Open(payload)
			if err != nil {
				b.Fatal(err)
			}
			sel, err := a.Select(opts)
			if err != nil {
				b.Fatal(err)
			}
			if !strings.EqualFold(sel.Key.Release, key.Release) {
				b.Fatalf("selected %v, want %v", sel.Key, key)
			}
		}
		b.ReportMetric(float64(len(payload)), "payload-bytes")
	})
}

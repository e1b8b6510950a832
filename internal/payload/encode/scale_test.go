package encode_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/payload/payloadtest"
)

// benchPayloads are the payloads named by $BTFEMBED_BENCH_PAYLOADS (a list,
// as for runtime's BenchmarkSelectScale: scripts/bench-cache.sh keeps the
// payload of each corpus it measures), with the entries each holds.
func benchPayloads(tb testing.TB) map[string][]encode.Entry {
	tb.Helper()
	env := os.Getenv("BTFEMBED_BENCH_PAYLOADS")
	if env == "" {
		tb.Skip("$BTFEMBED_BENCH_PAYLOADS names no payload")
	}
	out := map[string][]encode.Entry{}
	for _, path := range filepath.SplitList(env) {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		out[path] = decodeEntries(tb, b)
	}
	return out
}

// decodeEntries is every entry of payload b with its raw blobs and its
// load verdicts.
func decodeEntries(tb testing.TB, b []byte) []encode.Entry {
	tb.Helper()
	p := open(tb, b)
	all, err := payloadtest.All(p, nil)
	if err != nil {
		tb.Fatal(err)
	}
	blob := func(bl payload.Blob) []byte {
		raw, err := p.Blob(bl, nil)
		if err != nil {
			tb.Fatal(err)
		}
		return bytes.Clone(raw)
	}
	entries := make([]encode.Entry, len(all))
	for i, e := range all {
		entries[i] = encode.Entry{Key: e.Key, VMLinux: blob(e.VMLinux)}
		for _, m := range e.Modules {
			em := encode.Module{Name: m.Name, Split: blob(m.Split)}
			if m.HasBase {
				em.Base = blob(m.Base)
			}
			entries[i].Modules = append(entries[i].Modules, em)
		}
		preds, err := p.Predictions(e, nil)
		if err != nil {
			tb.Fatal(err)
		}
		for _, pr := range preds {
			entries[i].Unloadable = append(entries[i].Unloadable, encode.Prediction{
				Object:  encode.Object{Name: pr.Object.Name, Programs: pr.Object.Programs},
				Program: pr.Program, Verdict: pr.Verdict, Kind: pr.Kind, Reasons: pr.Reasons,
			})
		}
	}
	return entries
}

// TestReencodeBenchPayloads checks that payloads generate wrote encode to
// the same bytes again from the entries they hold: with payloads written
// by an earlier build, that a change of the encoder kept its output.
func TestReencodeBenchPayloads(t *testing.T) {
	for path, entries := range benchPayloads(t) {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := payloadtest.Encode(t, entries, nil); !bytes.Equal(got, want) {
			t.Errorf("%s: re-encoded to %d bytes that differ from its %d", path, len(got), len(want))
		}
	}
}

// BenchmarkEncodeScale is the generator's last step on the entries of
// real payloads ($BTFEMBED_BENCH_PAYLOADS), reporting next to allocations
// by how much the heap grew above what it held before, at most: with the
// collector run often (GOGC=10), close to the step's peak of live memory.
func BenchmarkEncodeScale(b *testing.B) {
	for path, entries := range benchPayloads(b) {
		b.Run(fmt.Sprintf("%s/kernels=%d", filepath.Base(path), len(entries)), func(b *testing.B) {
			b.ReportAllocs()
			defer debug.SetGCPercent(debug.SetGCPercent(10))
			var peak int64
			for b.Loop() {
				peak = max(peak, peakHeapGrowth(func() {
					if err := encode.Write(io.Discard, &encode.Payload{Entries: entries}, nil); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

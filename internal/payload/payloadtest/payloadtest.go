package payloadtest

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
)

// minBTFDir holds minimized BTF of several kernels, laid out as
// <distro>/<version>/<arch>/<release>.btf.
var minBTFDir = flag.String("minbtf", kerneltest.MinBTFDir(), "directory of minimized BTF, <distro>/<version>/<arch>/<release>.btf")

// Entries are the kernels under -minbtf (testdata/minbtf by default), as
// the generator would embed them.
func Entries(tb testing.TB) []encode.Entry {
	tb.Helper()
	var entries []encode.Entry
	for _, k := range kerneltest.MinBTF(tb, *minBTFDir) {
		entries = append(entries, encode.Entry{Key: k.Key, VMLinux: k.BTF})
	}
	return entries
}

// Many repeats Entries under n distinct releases, for payloads of more
// kernels, and more index blocks, than the testdata has.
func Many(tb testing.TB, n int) []encode.Entry {
	tb.Helper()
	base := Entries(tb)
	entries := make([]encode.Entry, n)
	for i := range entries {
		entries[i] = base[i%len(base)]
		entries[i].Key.Release = fmt.Sprintf("%s.%04d", entries[i].Key.Release, i)
	}
	return entries
}

// Encode writes entries as a payload with opts; an error fails tb.
func Encode(tb testing.TB, entries []encode.Entry, opts *encode.Options) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := encode.Write(&buf, entries, opts); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// agentObject is the object WithVerdicts predicts about: the object of the
// issue that asked for embedded verdicts, whose handle_fork reads
// task_struct.mm_cid (6.4) without a guard.
var agentObject = encode.Object{Name: "bpf_x86_bpfel.o", Programs: []string{"handle_exec", "handle_exit", "handle_fork"}}

// WithVerdicts returns entries with the verdicts the generator gives that
// object: on 6.1 kernels handle_fork fails on the unguarded read, and on
// the arm64 one handle_exit's analysis cannot decide; the 6.12 kernels
// get none. Several kernels share a verdict set, as in a real corpus.
func WithVerdicts(entries []encode.Entry) []encode.Entry {
	out := make([]encode.Entry, len(entries))
	for i, e := range entries {
		out[i] = e
		if !strings.HasPrefix(e.Key.Release, "6.1.") {
			continue
		}
		out[i].Unloadable = []encode.Prediction{{
			Object: agentObject, Program: "handle_fork", Verdict: payload.VerdictFails, Kind: "core",
			Reasons: []string{"reachable: byte_off task_struct.mm_cid poisoned at insn 12 (e->cid = BPF_CORE_READ(task, mm_cid);)"},
		}}
		if e.Key.Arch == "arm64" {
			out[i].Unloadable = append(out[i].Unloadable, encode.Prediction{
				Object: agentObject, Program: "handle_exit", Verdict: payload.VerdictUnknown, Kind: "analysis",
				Reasons: []string{
					"the walk gave up at insn 30: 1000000 instructions walked",
					"maybe reachable: byte_off task_struct.flags poisoned at insn 41",
				},
			})
		}
	}
	return out
}

package payloadtest

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/kerneltest"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/payload/encode"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/vocab"
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
	if err := encode.Write(&buf, &encode.Payload{Entries: entries}, opts); err != nil {
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
			Object: agentObject, Program: "handle_fork", Verdict: vocab.Fails, Kind: "core",
			Reasons: []string{"reachable: byte_off task_struct.mm_cid poisoned at insn 12 (e->cid = BPF_CORE_READ(task, mm_cid);)"},
		}}
		if e.Key.Arch == "arm64" {
			out[i].Unloadable = append(out[i].Unloadable, encode.Prediction{
				Object: agentObject, Program: "handle_exit", Verdict: vocab.Unknown, Kind: "analysis",
				Reasons: []string{
					"the walk gave up at insn 30: 1000000 instructions walked",
					"maybe reachable: byte_off task_struct.flags poisoned at insn 41",
				},
			})
		}
	}
	return out
}

// Amplification crafts the payload of issue 18's first finding: one
// kernel whose modules all name the same blob, a BTF header followed by a
// string table of strLen zero bytes, stored as one DEFLATE stream of
// about 40 KB. Each module that decodes the blob again multiplies what
// a few KB of payload costs.
func Amplification(tb testing.TB, key kernelkey.Key, modules, strLen int) []byte {
	tb.Helper()
	hdr := make([]byte, rawbtf.HeaderLen)
	binary.LittleEndian.PutUint16(hdr, rawbtf.Magic)
	hdr[2] = rawbtf.Version
	binary.LittleEndian.PutUint32(hdr[4:], rawbtf.HeaderLen)
	binary.LittleEndian.PutUint32(hdr[20:], uint32(strLen)) // str_len; types and strings at offset 0
	// Level 1 compresses the zeros as well as any, quickly.
	var blob bytes.Buffer
	zw, err := flate.NewWriter(&blob, flate.BestSpeed)
	if err != nil {
		tb.Fatal(err)
	}
	zw.Write(hdr)
	if _, err := io.CopyN(zw, zeros{}, int64(strLen)); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	ix := payload.Index{
		Blobs:   []payload.BlobRecord{{Codec: payload.CodecDeflate, N: uint64(blob.Len()), RawLen: uint64(rawbtf.HeaderLen + strLen)}},
		Entries: []payload.EntryRecord{{Key: key}},
	}
	for i := range modules {
		ix.Entries[0].Modules = append(ix.Entries[0].Modules, payload.ModuleRecord{Name: fmt.Sprintf("m%d", i), Split: 0})
	}
	dir, blocks, sections := ix.Marshal(blob.Len()) // all empty
	var frames [][]byte
	for _, b := range blocks {
		var f bytes.Buffer
		zw.Reset(&f)
		zw.Write(b)
		if err := zw.Close(); err != nil {
			tb.Fatal(err)
		}
		frames = append(frames, f.Bytes())
	}
	dir = payload.AppendFrames(dir, append(frames, make([][]byte, len(sections))...), append(blocks, sections...))
	out := []byte(payload.Magic)
	out = binary.LittleEndian.AppendUint32(out, payload.Version)
	out = binary.LittleEndian.AppendUint32(out, 0) // checksum, below
	out = binary.LittleEndian.AppendUint32(out, uint32(len(dir)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(bytes.Join(frames, nil))))
	out = append(out, dir...)
	out = append(out, bytes.Join(frames, nil)...)
	out = append(out, blob.Bytes()...)
	binary.LittleEndian.PutUint32(out[12:], payload.Checksum(out[16:]))
	return out
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// All lists every entry of p the way the payload's callers reach them
// (btfembed inspect, the runtime's Kernels then Lookup): Keys, then Find
// for each key, within bud.
func All(p *payload.Payload, bud *payload.Budget) ([]payload.Entry, error) {
	keys, err := p.Keys(bud)
	if err != nil {
		return nil, err
	}
	entries := make([]payload.Entry, len(keys))
	for i, k := range keys {
		e, ok, err := p.Find(k, bud)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s is listed, and Find does not find it", k)
		}
		entries[i] = e
	}
	return entries, nil
}

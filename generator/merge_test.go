package generator

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/btfembed/btfembed/internal/corpus"
	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/rawbtf"
	"github.com/btfembed/btfembed/internal/relodigest"
	"github.com/btfembed/btfembed/internal/vocab"
)

// shardParts runs Generate once per shard of n and returns the parts.
func shardParts(t testing.TB, objs []string, n int) []Part {
	t.Helper()
	var parts []Part
	for i := range n {
		res, err := Generate(context.Background(), &Args{Objects: objs, Corpus: testRoots(), Kernels: testKernels(), Shard: i, Shards: n})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := res.WritePart(&b, []byte("btfembed -corpus testdata")); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, Part{Name: fmt.Sprintf("part%d", i), Data: b.Bytes()})
	}
	return parts
}

// TestMerge: merging every shard gives the payload and report of the
// unsharded run, whatever the order of the parts.
func TestMerge(t *testing.T) {
	objs := testObjects(t)
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			parts := shardParts(t, objs, n)
			for _, order := range [][]Part{parts, reversed(parts)} {
				res, meta, err := Merge(order)
				if err != nil {
					t.Fatal(err)
				}
				if string(meta) != "btfembed -corpus testdata" {
					t.Errorf("merged meta %q", meta)
				}
				p := payloadOf(t, res)
				var js bytes.Buffer
				res.Report.WriteJSON(&js)
				sameOutput(t, "merged", objs, p, js.Bytes())
			}
		})
	}
}

// TestShardSplit: every kernel of the corpus is in exactly one shard.
func TestShardSplit(t *testing.T) {
	const n = 3
	count := map[kernelkey.Key]int{}
	total := 0
	for i := range n {
		for k, err := range corpus.Read(context.Background(), testRoots(), &corpus.Options{Shard: i, Shards: n, Release: testKernels()}) {
			if err != nil {
				t.Fatal(err)
			}
			count[k.Key]++
		}
	}
	for k, err := range corpus.Read(context.Background(), testRoots(), &corpus.Options{Release: testKernels()}) {
		if err != nil {
			t.Fatal(err)
		}
		total++
		if count[k.Key] != 1 {
			t.Errorf("kernel %s in %d shards", k.Key, count[k.Key])
		}
	}
	if len(count) != total {
		t.Errorf("shards hold %d kernels, the corpus %d", len(count), total)
	}
}

func TestMergeRejects(t *testing.T) {
	objs := testObjects(t)
	parts := shardParts(t, objs, 2)
	damaged := bytes.Clone(parts[1].Data)
	damaged[len(damaged)/2] ^= 1
	other := shardParts(t, objs[:1], 2)
	for _, tc := range []struct {
		name  string
		parts []Part
	}{
		{"missing shard", parts[:1]},
		{"shard twice", []Part{parts[0], parts[0], parts[1]}},
		{"damaged", []Part{parts[0], {Name: "damaged", Data: damaged}}},
		{"truncated", []Part{parts[0], {Name: "truncated", Data: parts[1].Data[:100]}}},
		{"not a part", []Part{parts[0], {Name: "junk", Data: []byte("hello")}}},
		{"an older format", []Part{parts[0], {Name: "old", Data: append([]byte("btfembed part 1\n"), parts[1].Data[len(partMagic):]...)}}},
		{"other objects", []Part{parts[0], other[1]}},
		{"objects of other relocations", []Part{parts[0], otherDigests(t, parts[1])}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Merge(tc.parts)
			if !errors.Is(err, ErrPart) {
				t.Fatalf("error %v, want one wrapping ErrPart", err)
			}
			if tc.name == "an older format" && !strings.Contains(err.Error(), "merge with the btfembed that wrote it") {
				t.Errorf("error %v does not say which btfembed merges it", err)
			}
		})
	}
}

// otherDigests is part as if its objects had other relocations.
func otherDigests(t *testing.T, part Part) Part {
	t.Helper()
	p, err := readPart(part.Name, part.Data)
	if err != nil {
		t.Fatal(err)
	}
	for _, progs := range p.Digests {
		for name := range progs {
			progs[name] = relodigest.Digest{1}
		}
	}
	data, err := p.encode()
	if err != nil {
		t.Fatal(err)
	}
	return Part{Name: "other relocations", Data: data}
}

func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// TestMergeCrafted is issue 18's crafted parts: a part whose SHA-256
// trailer is recomputed passed merge with any content. Each kernel is now
// checked like a corpus file.
func TestMergeCrafted(t *testing.T) {
	good := shardParts(t, testObjects(t), 1)[0]
	for _, tc := range []struct {
		name, want string
		craft      func(k *partKernel)
	}{
		{"garbage BTF", "vmlinux BTF", func(k *partKernel) { k.Entry.VMLinux = []byte("garbage, not BTF at all") }},
		{"escaping release", "not a safe path element", func(k *partKernel) {
			k.Entry.Key.Release, k.Report.Release = "../../../../tmp/rel/ESCAPED-merge", "../../../../tmp/rel/ESCAPED-merge"
		}},
		{"newline in arch", "not a safe path element", func(k *partKernel) { k.Entry.Key.Arch, k.Report.Arch = "x86_64\nFAKE", "x86_64\nFAKE" }},
		{"unknown arch", "unknown architecture", func(k *partKernel) { k.Entry.Key.Arch, k.Report.Arch = "pdp11", "pdp11" }},
		{"report of another kernel", "the report is of kernel", func(k *partKernel) { k.Report.Release = "6.12.118+deb12-amd64" }},
		{"report of other BTF", "the report says", func(k *partKernel) { k.Report.Types++ }},
		{"garbage module", "split BTF", func(k *partKernel) { k.Entry.Modules[0].Split = []byte("garbage, not BTF at all") }},
		{"module named twice", "twice", func(k *partKernel) { k.Entry.Modules = append(k.Entry.Modules, k.Entry.Modules[0]) }},
		{"escaping module name", "not a safe path element", func(k *partKernel) { k.Entry.Modules[0].Name = "../../evil" }},
		{"fixups not a digest", "fixups digest", func(k *partKernel) { k.Report.Fixups = "stable" }},
		{"no fixups", "fixups digest", func(k *partKernel) { k.Report.Fixups = "" }},
		{"over the decode budget", "decode budget", func(k *partKernel) {
			// Valid BTF: no types, a 33 MiB string table of empty strings.
			raw := make([]byte, rawbtf.HeaderLen+33<<20)
			binary.LittleEndian.PutUint16(raw, rawbtf.Magic)
			raw[2] = rawbtf.Version
			binary.LittleEndian.PutUint32(raw[4:], rawbtf.HeaderLen)
			binary.LittleEndian.PutUint32(raw[20:], 33<<20)
			k.Entry.VMLinux, k.Report.Types, k.Report.Bytes = raw, 0, len(raw)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := readPart(good.Name, good.Data)
			if err != nil {
				t.Fatal(err)
			}
			// The kernel with modules (6.1.0-50-cloud-amd64 of
			// corpus-extra), so every case has something to craft.
			i := slices.IndexFunc(p.Kernels, func(k partKernel) bool { return len(k.Entry.Modules) > 0 })
			if i < 0 {
				t.Fatal("no kernel with modules in the part")
			}
			tc.craft(&p.Kernels[i])
			data, err := p.encode()
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = Merge([]Part{{Name: "crafted", Data: data}})
			if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "crafted") {
				t.Fatalf("error %v, want ErrPart naming the part and saying %q", err, tc.want)
			}
		})
	}
}

// TestMergeWireNumbers: a part's kernels refer to its blobs and row lists
// by number, and a crafted part may number anything: a number outside
// its table is an error naming it, and an empty row list, which a part
// never writes (it writes 0), is taken as no rows rather than a crash.
func TestMergeWireNumbers(t *testing.T) {
	good := shardParts(t, testObjects(t), 1)[0]
	for _, tc := range []struct {
		name, want string
		craft      func(w *partWire)
	}{
		{"blob beyond the table", "blob", func(w *partWire) { w.Kernels[0].VMLinux = len(w.Blobs) + 1 }},
		{"negative blob", "blob", func(w *partWire) { w.Kernels[0].VMLinux = -1 }},
		{"row list beyond the table", "row list", func(w *partWire) { w.Kernels[0].Rows[1] = len(w.Relocations) + 1 }},
		{"digests of an object twice", "twice", func(w *partWire) { w.Digests = append(w.Digests, w.Digests[0]) }},
		{"digest of a program twice", "twice", func(w *partWire) {
			w.Digests[0].Programs = append(w.Digests[0].Programs, w.Digests[0].Programs[0])
		}},
		{"digests of another object", "not one of the objects", func(w *partWire) { w.Digests[0].Object = "other.o" }},
		{"unprintable program", "program name", func(w *partWire) { w.Digests[0].Programs[0].Name = "p\x1b[2J" }},
		{"empty row list", "", func(w *partWire) {
			w.Programs = append(w.Programs, []ProgramReport{})
			for i := range w.Kernels {
				w.Kernels[i].Rows[0] = len(w.Programs)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := readPart(good.Name, good.Data)
			if err != nil {
				t.Fatal(err)
			}
			w := p.toWire()
			tc.craft(w)
			data, err := w.encode()
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := Merge([]Part{{Name: "crafted", Data: data}})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want == "" && slices.ContainsFunc(res.Report.Kernels, func(k KernelReport) bool { return len(k.Programs) != 0 }):
				t.Error("a kernel kept programs the part did not give it")
			case tc.want != "" && (!errors.Is(err, ErrPart) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want ErrPart saying %q", err, tc.want)
			}
		})
	}
}

// TestMergeCraftedText is issue 33's crafted report rows: a part is
// untrusted input, and the words and text of its rows reached the JSON
// report, the payload's verdicts and the terminal as they were. A verdict
// or kind outside the report's words is refused; free text (reasons,
// program and object names, guarded misses) is accepted, and the table
// and errors print it escaped: an escape sequence cannot clear the
// screen, a newline cannot forge a line.
func TestMergeCraftedText(t *testing.T) {
	good := shardParts(t, testObjects(t), 1)[0]
	const hostile = "\x1b[2J\x1b[H\rFORGED\nFORGED: all programs load\x07"
	for _, tc := range []struct {
		name, want string // want "": merged, and printed escaped
		craft      func(r *KernelReport)
	}{
		{"verdict outside the words", `verdict "explodes"`, func(r *KernelReport) { r.Programs[0].Verdict = "explodes" }},
		{"hostile verdict", "verdict", func(r *KernelReport) { r.Programs[0].Verdict = hostile }},
		{"reason kind outside the words", "reason kind", func(r *KernelReport) {
			r.Programs[0].Verdict, r.Programs[0].Reason, r.Programs[0].Reasons = vocab.Fails.String(), "boom"+hostile, []string{"x"}
		}},
		{"relocation status outside the words", "status", func(r *KernelReport) { r.Unresolved[0].Status = "explodes" }},
		{"relocation kind outside the words", "kind", func(r *KernelReport) { r.KernelTypeIDs[0].Kind = hostile }},
		{"hostile text", "", func(r *KernelReport) {
			p := &r.Programs[0]
			p.Program, p.Verdict, p.Reason = "prog"+hostile, vocab.Fails.String(), string(vocab.KindHelper)
			p.Reasons, p.Guarded = []string{hostile, "second " + hostile}, []string{hostile}
			u := &r.Unresolved[0]
			u.Function, u.Field, u.Reason = hostile, hostile, hostile
			r.KernelTypeIDs[0].Type = hostile
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := readPart(good.Name, good.Data)
			if err != nil {
				t.Fatal(err)
			}
			// A kernel with unresolved relocations and kernel type IDs.
			i := slices.IndexFunc(p.Kernels, func(k partKernel) bool {
				return len(k.Report.Unresolved) > 0 && len(k.Report.KernelTypeIDs) > 0
			})
			if i < 0 {
				t.Fatal("no kernel with unresolved relocations and kernel type IDs in the part")
			}
			r := &p.Kernels[i].Report
			r.Programs, r.Unresolved, r.KernelTypeIDs = slices.Clone(r.Programs), slices.Clone(r.Unresolved), slices.Clone(r.KernelTypeIDs)
			tc.craft(r)
			data, err := p.encode()
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := Merge([]Part{{Name: "crafted", Data: data}})
			if tc.want != "" {
				if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "crafted") {
					t.Fatalf("error %v, want ErrPart naming the part and saying %s", err, tc.want)
				}
				printable(t, "error", err.Error())
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, verbose := range []bool{false, true} {
				var b strings.Builder
				if err := res.Report.WriteTable(&b, &TableOptions{Verbose: verbose}); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(b.String(), `\x1b[2J`) {
					t.Errorf("verbose %v: the table does not show the crafted text escaped:\n%s", verbose, b.String())
				}
				printable(t, fmt.Sprintf("table (verbose %v)", verbose), b.String())
			}
			printable(t, "CheckLoadable", res.Report.CheckLoadable().Error())
		})
	}
}

// printable fails unless s holds no control character but newlines and
// no line that the crafted text forged.
func printable(t *testing.T, what, s string) {
	t.Helper()
	if i := strings.IndexFunc(s, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }); i >= 0 {
		t.Errorf("%s prints control character %q: %q", what, s[i], s[max(0, i-40):min(len(s), i+40)])
	}
	for line := range strings.Lines(s) {
		if strings.HasPrefix(line, "FORGED") {
			t.Errorf("%s has a forged line: %q", what, line)
		}
	}
}

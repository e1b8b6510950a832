package generator

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/btfembed/btfembed/internal/kerneltest"
)

// craftPart returns good with its wire JSON changed by craft, which gets
// the top-level fields as raw JSON, and its SHA-256 trailer right.
func craftPart(t testing.TB, good Part, craft func(fields map[string]json.RawMessage)) Part {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(good.Data[len(partMagic):len(good.Data)-sha256.Size], &fields); err != nil {
		t.Fatal(err)
	}
	craft(fields)
	js, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	data := append(append(bytes.Clone(partMagic), js...), '\n')
	sum := sha256.Sum256(data)
	return Part{Name: "crafted", Data: append(data, sum[:]...)}
}

// jsonList is n copies of the JSON value v as an array.
func jsonList(v string, n int) json.RawMessage {
	return json.RawMessage("[" + strings.Repeat(v+",", n-1) + v + "]")
}

// referTo makes every kernel of the part refer to row lists rows
// (programs, unresolved, kernel type IDs), and repeats the kernels until
// there are n (0: as many as there are).
func referTo(t testing.TB, fields map[string]json.RawMessage, rows [3]int, n int) {
	t.Helper()
	var kernels []map[string]json.RawMessage
	if err := json.Unmarshal(fields["Kernels"], &kernels); err != nil {
		t.Fatal(err)
	}
	for i := range kernels {
		kernels[i]["Rows"], _ = json.Marshal(rows)
	}
	for i := 0; i < n && len(kernels) < n; i++ {
		kernels = append(kernels, kernels[i])
	}
	fields["Kernels"], _ = json.Marshal(kernels)
}

// hostileParts are issue 33's parts that cost merge far more memory than
// their size, small versions: (a part of ten million empty rows, 30 MB,
// took merge to 4.4 GB of peak RSS), each made from good.
func hostileParts(t testing.TB, good Part) []struct {
	name, want string
	part       Part
} {
	const n = 1 << 20
	return []struct {
		name, want string
		part       Part
	}{
		{"empty program rows", "would take", craftPart(t, good, func(f map[string]json.RawMessage) {
			f["Programs"] = json.RawMessage("[" + string(jsonList("{}", n)) + "]")
			referTo(t, f, [3]int{1, 0, 0}, 0)
		})},
		{"empty kernels", "would take", craftPart(t, good, func(f map[string]json.RawMessage) {
			f["Kernels"] = jsonList("{}", n/4)
		})},
		{"empty object names", "would take", craftPart(t, good, func(f map[string]json.RawMessage) {
			f["Objects"] = jsonList(`""`, n)
		})},
		{"rows inside a kernel", "would take", craftPart(t, good, func(f map[string]json.RawMessage) {
			f["Kernels"] = json.RawMessage(`[{"Report":{"unresolved":` + string(jsonList("{}", n)) + `}}]`)
		})},
		{"empty reasons", "would take", craftPart(t, good, func(f map[string]json.RawMessage) {
			f["Programs"] = json.RawMessage(`[[{"verdict":"fails","reasons":` + string(jsonList(`""`, n)) + `}]]`)
		})},
		{"rows under a key of other case", "would take", craftPart(t, good, func(f map[string]json.RawMessage) {
			f["PROGRAMS"] = json.RawMessage("[" + string(jsonList("{}", n)) + "]")
		})},
		// A list of rows a real part could hold, shared by more kernels
		// than a merged report can hold rows for.
		{"a shared list in every kernel", "report rows", craftPart(t, good, func(f map[string]json.RawMessage) {
			row := `{"object":"` + strings.Repeat("o", 40) + `.o","program":"handle_exec","verdict":"loads"}`
			f["Programs"] = json.RawMessage("[" + string(jsonList(row, 1<<14)) + "]")
			referTo(t, f, [3]int{1, 0, 0}, maxRows>>14+1)
		})},
	}
}

// TestMergeMemory is issue 33's merge without a memory bound: each
// hostile part is refused, with an error naming it, having allocated
// little more than the part's size. Before, the first (a million empty
// program rows, 3 MB) was merged, rc 0, having allocated 400 MB.
func TestMergeMemory(t *testing.T) {
	good := shardParts(t, testObjects(t), 1)[0]
	for _, tc := range hostileParts(t, good) {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := Merge([]Part{tc.part})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), "crafted") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrPart naming the part and saying %q", err, tc.want)
			}
			if alloc, limit := after.TotalAlloc-before.TotalAlloc, uint64(partDecodeFactor*len(tc.part.Data)+16<<20); alloc > limit {
				t.Errorf("merging a %d-byte part allocated %d MiB, more than %d MiB", len(tc.part.Data), alloc>>20, limit>>20)
			}
		})
	}
}

// TestPartDecodedSize: decodedSize bounds the memory json.Unmarshal keeps
// for a part, the parts btfembed writes (the testdata objects, and with
// the big object) are well within partDecodeFactor, and the hostile ones
// are not.
func TestPartDecodedSize(t *testing.T) {
	objs := testObjects(t)
	good := shardParts(t, objs, 1)[0]
	big := shardParts(t, append(objs[:len(objs):len(objs)], filepath.Join(kerneltest.Dir(), "objects", "big", "big-el.o")), 1)[0]
	type tcase struct {
		name   string
		part   Part
		within bool
	}
	cases := []tcase{{"testdata part", good, true}, {"part with the big object", big, true}}
	for _, h := range hostileParts(t, good) {
		// The shared list is within: the row count refuses it.
		cases = append(cases, tcase{h.name, h.part, h.want == "report rows"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.part.Data[len(partMagic) : len(tc.part.Data)-sha256.Size]
			size, err := decodedSize(body, reflect.TypeFor[partWire]())
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var w partWire
			if err := json.Unmarshal(body, &w); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(&w)
			live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("%d bytes: decodedSize %d (%.2f times), live heap %d", len(body), size, float64(size)/float64(len(body)), live)
			if live > size+64<<10 {
				t.Errorf("json.Unmarshal keeps %d bytes, decodedSize says at most %d", live, size)
			}
			if within := checkPartSize(body) == nil; within != tc.within {
				t.Errorf("within the bound: %v, want %v", within, tc.within)
			}
		})
	}
}

// TestCountRows: a kernel may refer to at most maxKernelRows rows; the
// lists are made but never touched, so they cost no memory.
func TestCountRows(t *testing.T) {
	relocs := make([]RelocationReport, maxKernelRows/2+1)
	for _, tc := range []struct {
		name string
		rows [3]int
		want string
	}{
		{"under", [3]int{0, 1, 0}, ""},
		{"over", [3]int{0, 1, 1}, fmt.Sprintf("more than %d", maxKernelRows)},
		{"beyond the table", [3]int{0, 2, 0}, "row list 2 of 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &partWire{Relocations: [][]RelocationReport{relocs}, Kernels: []kernelWire{{Rows: tc.rows}}}
			err := w.countRows(&part{})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

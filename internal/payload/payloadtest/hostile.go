package payloadtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"

	"github.com/btfembed/btfembed/internal/kernelkey"
	"github.com/btfembed/btfembed/internal/payload"
	"github.com/btfembed/btfembed/internal/rawbtf"
)

// This file crafts what the generator never writes, for the tests of
// the runtime's budget and checks (issue 33): payloads from an index
// given record by record, and BTF from records given word by word.

// Assemble writes ix as a payload over the data area data: every block
// and section compressed, the directory, the checksum. It is the
// encoder's layout without its checks, so ix may be anything Marshal
// takes.
func Assemble(tb testing.TB, ix payload.Index, data []byte) []byte {
	tb.Helper()
	dir, blocks, sections := ix.Marshal(len(data))
	var frames, raws [][]byte
	for _, b := range append(blocks, sections...) {
		if b == nil { // an empty section: no frame
			frames, raws = append(frames, nil), append(raws, nil)
			continue
		}
		frames, raws = append(frames, deflate(tb, b)), append(raws, b)
	}
	dir = payload.AppendFrames(dir, frames, raws)
	le := binary.LittleEndian
	out := []byte(payload.Magic)
	out = le.AppendUint32(out, payload.Version)
	out = le.AppendUint32(out, 0) // checksum, below
	area := bytes.Join(frames, nil)
	out = le.AppendUint32(out, uint32(len(dir)))
	out = le.AppendUint32(out, uint32(len(area)))
	out = append(out, dir...)
	out = append(out, area...)
	out = append(out, data...)
	le.PutUint32(out[12:], payload.Checksum(out[16:]))
	return out
}

// deflate compresses b as one raw DEFLATE stream, at the level that
// compresses crafted repetition best.
func deflate(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// Stored is a payload of entries whose BTF blobs are stored as they are,
// neither compressed nor packed, one after the other in the data area:
// mutating a byte of a blob there changes that byte of the BTF the
// runtime reads. Each entry's BTF is a vmlinux blob, without modules.
func Stored(tb testing.TB, keys []kernelkey.Key, blobs [][]byte) []byte {
	tb.Helper()
	var ix payload.Index
	var data []byte
	for i, k := range keys {
		ix.Blobs = append(ix.Blobs, payload.BlobRecord{Codec: payload.CodecStored, Off: uint64(len(data)), N: uint64(len(blobs[i])), RawLen: uint64(len(blobs[i]))})
		ix.Entries = append(ix.Entries, payload.EntryRecord{Key: k, VMLinux: uint64(i)})
		data = append(data, blobs[i]...)
	}
	return Assemble(tb, ix, data)
}

// StoredOffsets returns where each blob of a Stored payload starts in
// it, and where the data area ends.
func StoredOffsets(p []byte, blobs [][]byte) []int {
	le := binary.LittleEndian
	off := payload.HeaderLen + int(le.Uint32(p[16:])) + int(le.Uint32(p[20:]))
	var offs []int
	for _, b := range blobs {
		offs = append(offs, off)
		off += len(b)
	}
	return append(offs, off)
}

// ModuleFlood is a payload of kernels entries (in blocks of BlockLen, as
// the encoder writes them), each with modules modules whose split BTF and
// distilled base are the vmlinux blob, an empty BTF of 25 bytes. A
// block's entries repeat one module list, so it compresses about a
// thousandfold while its records decode to 31 times their bytes (an
// EntryModule of 280 bytes from 9); each module also makes Lookup
// relocate and load a spec over a copy of vmlinux.
func ModuleFlood(tb testing.TB, kernels, modules int, release func(i int) string) []byte {
	tb.Helper()
	empty := RawBTF(nil, "")
	ix := payload.Index{Blobs: []payload.BlobRecord{{Codec: payload.CodecStored, N: uint64(len(empty)), RawLen: uint64(len(empty))}}}
	mods := make([]payload.ModuleRecord, modules)
	for i := range mods {
		mods[i] = payload.ModuleRecord{Name: fmt.Sprintf("m%05d", i), Base: 1}
	}
	for i := range kernels {
		ix.Entries = append(ix.Entries, payload.EntryRecord{Key: FloodKey(i, release), Modules: mods})
	}
	return Assemble(tb, ix, empty)
}

// FloodKey is the key of ModuleFlood's i-th kernel: release(i), or a
// release of its own when release is nil, then a distribution of its own.
func FloodKey(i int, release func(i int) string) kernelkey.Key {
	k := kernelkey.Key{Arch: "x86_64", Release: fmt.Sprintf("flood.%07d", i), Distro: fmt.Sprintf("d%07d", i)}
	if release != nil {
		k.Release = release(i)
	}
	return k
}

// Info is a BTF type record's info word.
func Info(kind rawbtf.Kind, vlen int, kindFlag bool) uint32 {
	info := uint32(kind)<<24 | uint32(vlen)
	if kindFlag {
		info |= 1 << 31
	}
	return info
}

// RawBTF is standalone little-endian BTF with the 24-byte header: the type
// records given, each as its words (name_off, info, size or type, then
// what its kind adds), and the string table "\x00" followed by strs,
// where the string that starts at byte i of strs has offset 1+i.
func RawBTF(types [][]uint32, strs string) []byte {
	le := binary.LittleEndian
	var ts []byte
	for _, t := range types {
		for _, w := range t {
			ts = le.AppendUint32(ts, w)
		}
	}
	table := "\x00" + strs
	b := le.AppendUint16(nil, rawbtf.Magic)
	b = append(b, rawbtf.Version, 0)
	b = le.AppendUint32(b, rawbtf.HeaderLen)
	b = le.AppendUint32(b, 0)                  // type_off
	b = le.AppendUint32(b, uint32(len(ts)))    // type_len
	b = le.AppendUint32(b, uint32(len(ts)))    // str_off
	b = le.AppendUint32(b, uint32(len(table))) // str_len
	return append(append(b, ts...), table...)
}

// intType is a 4-byte signed int named by nameOff.
func intType(nameOff uint32) []uint32 {
	return []uint32{nameOff, Info(rawbtf.KindInt, 0, false), 4, rawbtf.IntSigned<<24 | 32}
}

// PointerChain is BTF of n pointers, each to the next and the last to an
// int: decoding the first recurses n types deep, about 1 KB of goroutine
// stack each in cilium/ebpf.
func PointerChain(n int) []byte {
	types := make([][]uint32, 0, n+1)
	for i := 1; i <= n; i++ {
		types = append(types, []uint32{0, Info(rawbtf.KindPtr, 0, false), uint32(i + 1)})
	}
	return RawBTF(append(types, intType(0)), "")
}

// NameFlood is BTF of an int and structs structs named "flood", each of
// members members that all name one string of strLen bytes: cilium/ebpf
// copies a name each time it decodes one, so the structs take
// structs*members*strLen bytes decoded, from 12 bytes per member and one
// string.
func NameFlood(structs, members, strLen int) []byte {
	const floodOff, longOff = 1, 7 // "flood\x00" then the long string
	types := [][]uint32{intType(0)}
	for range structs {
		st := []uint32{floodOff, Info(rawbtf.KindStruct, members, false), 4}
		for range members {
			st = append(st, longOff, 1, 0)
		}
		types = append(types, st)
	}
	return RawBTF(types, "flood\x00"+strings.Repeat("x", strLen)+"\x00")
}

// TaggedFuncs is BTF of a function prototype of params int parameters and
// funcs functions of it, each with one decl tag: cilium/ebpf gives each
// tagged function a tag list per parameter, 24*params bytes, from the 28
// bytes of a function and its tag.
func TaggedFuncs(funcs, params int) []byte {
	const nameOff, tagOff = 1, 3 // "f\x00" then "tag\x00"
	proto := []uint32{0, Info(rawbtf.KindFuncProto, params, false), 1}
	for range params {
		proto = append(proto, 0, 1)
	}
	types := [][]uint32{intType(0), proto}
	for range funcs {
		types = append(types, []uint32{nameOff, Info(rawbtf.KindFunc, 0, false), 2})
	}
	for i := range funcs {
		types = append(types, []uint32{tagOff, Info(rawbtf.KindDeclTag, 0, false), uint32(3 + i), 0xffffffff})
	}
	return RawBTF(types, "f\x00tag\x00")
}

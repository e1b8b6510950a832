// Package payload defines the btfembed payload, the bytes the generator
// embeds in an agent and the runtime reads: the header, the index, the
// BTF column transform, and the decoder. The encoder is in the encode
// subpackage, which only the generator imports, so an agent links the
// decoder alone (no zstd encoder).
//
// # Layout
//
// All integers are little endian; "uv" is an unsigned varint.
//
//	0   [8]byte  magic "BTFEMBED"
//	8   u32      format version (Version)
//	12  u32      CRC-32C (Castagnoli) of every byte from offset 16 to the end
//	16  u32      length n of the index frame
//	20  u32      length of the decompressed index
//	24  [n]byte  index: one zstd frame
//	24+n         data: dictionaries and blobs, addressed relative to here
//
// The decompressed index (Index):
//
//	uv count, then per string:      uv length, bytes
//	uv count, then per dictionary:  uv offset, uv stored length, uv length,
//	                                uv base dictionary+1 (0: none)
//	uv count, then per blob:        uv codec, uv dictionary+1 (0: none),
//	                                uv offset, uv stored length,
//	                                uv packed length, uv length
//	uv count, then per entry:       uv arch, release, distro, version (string
//	                                indexes), uv vmlinux blob, uv modules,
//	                                then per module: uv name (string index),
//	                                uv base blob+1 (0: none), uv split blob
//
// Entries are sorted by kernelkey.Key.Compare, modules by name, so a
// reader finds a kernel by binary search and all builds of one release
// are neighbours.
//
// A dictionary is a zstd frame whose content is the concatenation of the
// packed forms of some blobs (its representatives). It may be compressed
// with an earlier dictionary (its base, itself without a base) as raw
// content, zstd dictionary ID = base index + 1. A blob's stored bytes
// decode, by codec, to its packed form; the packed form is the raw blob
// when its packed length is 0, and the BTF column transform (Pack)
// otherwise. Codecs:
//
//	CodecStored  the stored bytes are the packed form
//	CodecZstd    a zstd frame, compressed with the blob's dictionary as
//	             raw content (zstd dictionary ID = dictionary index + 1)
//	CodecSlice   the packed form is dictionary content [offset, offset+length)
//
// # Design
//
// Why the bytes look like this, given that an agent selects one kernel
// once at start-up and a payload may hold thousands:
//
//   - Blobs, not entries, are the unit of storage: identical BTF (one
//     vmlinux under two distributions, one module in many builds) is
//     stored once and referred to by index.
//   - Grouping: blobs of one role (vmlinux, or one module's base or split
//     BTF) are compressed together, because minimized BTF of one role is
//     alike across kernels and unlike across roles.
//   - Dictionaries instead of one solid stream: each entry must decompress
//     on its own, touching only its blobs and at most two dictionaries (a
//     dictionary and its base, never a chain), so Select costs about what
//     parsing its entry does however many kernels are embedded. A blob is
//     either a representative inside a dictionary (read from it for free)
//     or a small zstd frame against it.
//   - Columns: the column transform (btfcodec.go) splits BTF's type
//     section into kinds, names, references and plain numbers, written
//     relative to what came before, so that one inserted type or string
//     does not shift every later ID and offset; kernels of a series then
//     share long identical runs a compressor can use.
//   - Bounds: every length is checked against what the input can hold and
//     against MaxBlobLen before any allocation, and the CRC-32C catches
//     accidental corruption before any decompression, so a bad payload is
//     an error wrapping ErrCorrupt, never a panic or a huge allocation.
package payload

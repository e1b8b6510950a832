package extract

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// RPM headers (the signature header and the main header share the
// layout) are read by hand here. The maintained Go reader,
// github.com/sassoftware/go-rpmutils, was used for its tag reader alone
// and linked an OpenPGP implementation (ProtonMail/go-crypto,
// cloudflare/circl, golang.org/x/crypto) and, with cgo on, the C zstd
// library into btfembed: tens of seconds of C compilation on a cold
// build, MBs of binary and dozens of package inits for what follows. It
// also allocated what a header's intro claimed and sliced tag data at
// unchecked offsets. The layout is rpm's (docs/manual/format.md in rpm's
// sources; the checks follow lib/header.c, hdrblobVerifyInfo), all
// big-endian:
//
//	intro  magic 8e ad e8 01, 4 reserved bytes, il (index entries), dl (store bytes)
//	index  il entries of 16 bytes: tag, type, offset into the store, count
//	store  dl bytes of tag data
//
// parseRPMTags takes a header whose whole size (16 + 16*il + dl, after
// rpmIntro's limits) the caller holds, and checks every entry before any
// is read: a known type, its data inside the store and clear of every
// other entry's (the entries sorted by offset, each one's data must end
// where the next one's begins at the latest, so that a string array's
// terminators are searched once over the store however many entries
// there are). rpm also checks each entry's alignment, the type each tag
// must have and the region trailer; nothing read here depends on those,
// so they are left to rpm. A tag present twice is an error only when it
// is read.

// RPM header data types (rpm's lib/rpmtag.h, rpmTagType).
const (
	rpmTypeNull        = 0
	rpmTypeChar        = 1
	rpmTypeInt8        = 2
	rpmTypeInt16       = 3
	rpmTypeInt32       = 4
	rpmTypeInt64       = 5
	rpmTypeString      = 6
	rpmTypeBin         = 7
	rpmTypeStringArray = 8
	rpmTypeI18NString  = 9
)

// RPM header tags this package reads (rpm's lib/rpmtag.h): the main
// header's, then the signature header's digests of the main header.
const (
	rpmTagName              = 1000
	rpmTagVersion           = 1001
	rpmTagRelease           = 1002
	rpmTagVendor            = 1011
	rpmTagArch              = 1022
	rpmTagSourceRPM         = 1044
	rpmTagPayloadFormat     = 1124
	rpmTagPayloadCompressor = 1125
	rpmTagPayloadDigest     = 5092
	rpmTagPayloadDigestAlgo = 5093

	rpmSigTagSHA1   = 269 // RPMSIGTAG_SHA1: hex SHA-1 of the main header
	rpmSigTagSHA256 = 273 // RPMSIGTAG_SHA256: hex SHA-256 of the main header
)

// rpmTags is a header whose index is checked.
type rpmTags struct {
	what    string     // "rpm header", "rpm signature header": errors start with it
	entries []rpmEntry // by tag, then index order
	store   []byte
}

// rpmEntry is an index entry; store[off:end] is its data.
type rpmEntry struct {
	tag, typ, count uint32
	off, end        int
}

// rpmIntro checks a header's intro (magic, reserved, tag count, data
// size) against the limits and returns the counts.
func rpmIntro(intro []byte, what string, maxTags, maxData uint32) (il, dl uint32, err error) {
	if len(intro) < rpmIntroSize {
		return 0, 0, fmt.Errorf("rpm %s: %w", what, io.ErrUnexpectedEOF)
	}
	if binary.BigEndian.Uint32(intro) != rpmHeaderMagic {
		return 0, 0, fmt.Errorf("rpm %s: bad magic %#x", what, intro[:4])
	}
	il, dl = binary.BigEndian.Uint32(intro[8:]), binary.BigEndian.Uint32(intro[12:])
	if il > maxTags {
		return 0, 0, fmt.Errorf("rpm %s: %d tags, at most %d: %w", what, il, maxTags, ErrTooLarge)
	}
	if dl > maxData {
		return 0, 0, fmt.Errorf("rpm %s: %d bytes of data, at most %d: %w", what, dl, maxData, ErrTooLarge)
	}
	return il, dl, nil
}

// rpmHeaderSize is the size of a header of il entries and dl bytes of
// data, padding excluded; the limits keep it far from overflowing.
func rpmHeaderSize(il, dl uint32) int {
	return rpmIntroSize + int(il)*rpmEntrySize + int(dl)
}

// parseRPMTags checks the header at the start of b (what follows it,
// such as the signature header's padding, is ignored) and indexes its
// tags. what names the header in errors: "header", "signature header".
func parseRPMTags(b []byte, what string, maxTags, maxData uint32) (*rpmTags, error) {
	il, dl, err := rpmIntro(b, what, maxTags, maxData)
	if err != nil {
		return nil, err
	}
	what = "rpm " + what
	size := rpmHeaderSize(il, dl)
	if len(b) < size {
		return nil, fmt.Errorf("%s: %d tags and %d bytes of data need %d bytes, %d here: %w", what, il, dl, size, len(b), io.ErrUnexpectedEOF)
	}
	index := b[rpmIntroSize : rpmIntroSize+int(il)*rpmEntrySize]
	t := &rpmTags{what: what, entries: make([]rpmEntry, il), store: b[size-int(dl) : size]}
	be := binary.BigEndian
	for i := range t.entries {
		e := index[i*rpmEntrySize:]
		t.entries[i] = rpmEntry{tag: be.Uint32(e), typ: be.Uint32(e[4:]), count: be.Uint32(e[12:])}
		off := be.Uint32(e[8:])
		if off > dl {
			return nil, fmt.Errorf("%s: tag %d: data offset %d past the %d-byte store", what, t.entries[i].tag, off, dl)
		}
		if t.entries[i].typ > rpmTypeI18NString {
			return nil, fmt.Errorf("%s: tag %d: unknown data type %d", what, t.entries[i].tag, t.entries[i].typ)
		}
		t.entries[i].off = int(off)
	}
	// Each entry's data may reach at most where the next one's starts.
	slices.SortStableFunc(t.entries, func(a, b rpmEntry) int { return cmp.Compare(a.off, b.off) })
	for i := range t.entries {
		e := &t.entries[i]
		limit := len(t.store)
		if i+1 < len(t.entries) {
			limit = t.entries[i+1].off
		}
		n, ok := rpmDataLen(e.typ, e.count, t.store[e.off:limit])
		if !ok {
			next := "the end of the store"
			if i+1 < len(t.entries) {
				next = fmt.Sprintf("tag %d's data", t.entries[i+1].tag)
			}
			return nil, fmt.Errorf("%s: tag %d: %d values of type %d at offset %d do not fit before %s at %d",
				what, e.tag, e.count, e.typ, e.off, next, limit)
		}
		e.end = e.off + n
	}
	slices.SortStableFunc(t.entries, func(a, b rpmEntry) int { return cmp.Compare(a.tag, b.tag) })
	return t, nil
}

// rpmDataLen is the length of count values of type typ at the start of
// data, and whether they fit in it. A string is one value (rpm requires
// count 1), a string array count values, each ending with a NUL.
func rpmDataLen(typ, count uint32, data []byte) (int, bool) {
	size := uint64(0)
	switch typ {
	case rpmTypeNull:
		return 0, true
	case rpmTypeChar, rpmTypeInt8, rpmTypeBin:
		size = 1
	case rpmTypeInt16:
		size = 2
	case rpmTypeInt32:
		size = 4
	case rpmTypeInt64:
		size = 8
	case rpmTypeString, rpmTypeStringArray, rpmTypeI18NString:
		if typ == rpmTypeString && count != 1 {
			return 0, false
		}
		n := 0
		for range count {
			i := bytes.IndexByte(data[n:], 0)
			if i < 0 {
				return 0, false
			}
			n += i + 1
		}
		return n, true
	}
	n := size * uint64(count)
	return int(n), n <= uint64(len(data))
}

// lookup returns the one entry of tag, ok false if there is none.
func (t *rpmTags) lookup(tag uint32) (e rpmEntry, ok bool, err error) {
	i, ok := slices.BinarySearchFunc(t.entries, tag, func(e rpmEntry, tag uint32) int { return cmp.Compare(e.tag, tag) })
	if !ok {
		return rpmEntry{}, false, nil
	}
	if i+1 < len(t.entries) && t.entries[i+1].tag == tag {
		return rpmEntry{}, false, fmt.Errorf("%s: tag %d appears more than once", t.what, tag)
	}
	return t.entries[i], true, nil
}

// firstString returns the first string of a string tag, "" if the
// header has no such tag. When one is true the tag must hold exactly one
// (a STRING, or an array of one), as NAME or ARCH do.
func (t *rpmTags) firstString(tag uint32, one bool) (string, error) {
	e, ok, err := t.lookup(tag)
	if !ok || err != nil {
		return "", err
	}
	switch {
	case e.typ != rpmTypeString && e.typ != rpmTypeStringArray && e.typ != rpmTypeI18NString:
		return "", fmt.Errorf("%s: tag %d has type %d, not a string", t.what, tag, e.typ)
	case e.count == 0 || one && e.count != 1:
		return "", fmt.Errorf("%s: tag %d holds %d strings, want one", t.what, tag, e.count)
	}
	data := t.store[e.off:e.end]
	return string(data[:bytes.IndexByte(data, 0)]), nil
}

// firstUint32 returns the first value of an integer tag of at most 32
// bits, ok false if the header has no such tag.
func (t *rpmTags) firstUint32(tag uint32) (v uint32, ok bool, err error) {
	e, ok, err := t.lookup(tag)
	if !ok || err != nil {
		return 0, false, err
	}
	data := t.store[e.off:e.end]
	switch {
	case e.count == 0:
		return 0, false, fmt.Errorf("%s: tag %d holds no value", t.what, tag)
	case e.typ == rpmTypeChar || e.typ == rpmTypeInt8:
		return uint32(data[0]), true, nil
	case e.typ == rpmTypeInt16:
		return uint32(binary.BigEndian.Uint16(data)), true, nil
	case e.typ == rpmTypeInt32:
		return binary.BigEndian.Uint32(data), true, nil
	}
	return 0, false, fmt.Errorf("%s: tag %d has type %d, not an integer of at most 32 bits", t.what, tag, e.typ)
}

// readClaimed reads the n bytes a header's intro claims, allocating as
// they arrive rather than all at once: a header claiming 64 MiB in a
// file cut after 1 KiB costs 1 MiB. It holds at most 2n bytes while it
// grows.
func readClaimed(r io.Reader, n int) ([]byte, error) {
	b := make([]byte, 0, min(n, 1<<20))
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(len(b), n-len(b)))
		}
		m, err := io.ReadFull(r, b[len(b):min(cap(b), n)])
		b = b[:len(b)+m]
		if err != nil {
			return nil, noEOF(err)
		}
	}
	return b, nil
}

package payload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/btfembed/btfembed/internal/rawbtf"
)

// errPacked wraps ErrCorrupt: packed BTF only comes from a payload.
var errPacked = fmt.Errorf("%w: malformed packed BTF", ErrCorrupt)

// unpacker rebuilds raw BTF from the packed form one piece at a time:
// the header, then each type record, then the string section. Every read
// is bounds-checked; the columns must add up exactly to the announced
// type section.
type unpacker struct {
	hdr                      []byte
	strs                     []byte
	kinds, names, refs, nums []byte
	typeLen                  int
	done                     int // bytes of the type section produced
	id                       uint32
	nc                       nameCoder
	rc                       refCoder
	headerOut, stringsOut    bool
	scratch                  []byte // the last record
}

func newUnpacker(packed []byte, rawLen int) (*unpacker, error) {
	if len(packed) < rawbtf.HeaderLen {
		return nil, fmt.Errorf("%w: header truncated", errPacked)
	}
	hdr, ok := checkHeader(packed[:rawbtf.HeaderLen], uint64(rawLen))
	if !ok {
		return nil, fmt.Errorf("%w: header does not describe %d bytes of BTF", errPacked, rawLen)
	}
	rest := packed[rawbtf.HeaderLen:]
	if uint64(len(rest)) < uint64(hdr.strLen) {
		return nil, fmt.Errorf("%w: string section truncated", errPacked)
	}
	u := &unpacker{hdr: packed[:rawbtf.HeaderLen], strs: rest[:hdr.strLen], typeLen: int(hdr.typeLen), id: 1}
	rest = rest[hdr.strLen:]
	for i, col := range []*[]byte{&u.kinds, &u.names, &u.refs} {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return nil, fmt.Errorf("%w: column %d truncated", errPacked, i)
		}
		*col = rest[k : k+int(n)]
		rest = rest[k+int(n):]
	}
	u.nums = rest
	u.nc = nameCoder{strs: u.strs}
	return u, nil
}

func (u *unpacker) uvarint(col *[]byte, what string) (uint64, error) {
	v, k := binary.Uvarint(*col)
	if k <= 0 {
		return 0, fmt.Errorf("%w: %s column truncated", errPacked, what)
	}
	*col = (*col)[k:]
	return v, nil
}

func (u *unpacker) field(f rawbtf.Word) (uint32, error) {
	v, err := u.word(f)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("%w: %w", errPacked, err) // a coder's range error
	}
	return v, err
}

func (u *unpacker) word(f rawbtf.Word) (uint32, error) {
	switch f {
	case rawbtf.WordName:
		code, err := u.uvarint(&u.names, "name")
		if err != nil {
			return 0, err
		}
		return u.nc.decode(code)
	case rawbtf.WordRef:
		code, err := u.uvarint(&u.refs, "reference")
		if err != nil {
			return 0, err
		}
		return u.rc.decode(code)
	default:
		v, err := u.uvarint(&u.nums, "number")
		if err != nil {
			return 0, err
		}
		if v > 0xffffffff {
			return 0, fmt.Errorf("%w: number out of range", errPacked)
		}
		return uint32(v), nil
	}
}

// record appends the next type record to out.
func (u *unpacker) record(out []byte) ([]byte, error) {
	le := binary.LittleEndian
	id := u.id
	u.id++
	kb := u.kinds[0]
	u.kinds = u.kinds[1:]
	vlen, err := u.uvarint(&u.kinds, "kind")
	if err != nil {
		return nil, err
	}
	kind := uint32(kb & infoKindMask)
	l, ok := kindWords(kind)
	if kb&^(infoKindMask|0x80) != 0 || !ok || vlen > infoVlenMask {
		return nil, fmt.Errorf("%w: type %d: bad kind", errPacked, id)
	}
	size := rawbtf.TypeLen + 4*(len(l.Extra)+int(vlen)*len(l.PerMember))
	if u.typeLen-u.done < size {
		return nil, fmt.Errorf("%w: type %d overruns the type section", errPacked, id)
	}
	u.done += size
	u.rc.startType(id)
	name, err := u.field(rawbtf.WordName)
	if err != nil {
		return nil, err
	}
	third, err := u.field(l.Third)
	if err != nil {
		return nil, err
	}
	out = le.AppendUint32(out, name)
	out = le.AppendUint32(out, kind<<24|uint32(kb>>7)<<31|uint32(vlen))
	out = le.AppendUint32(out, third)
	for _, f := range l.Extra {
		v, err := u.field(f)
		if err != nil {
			return nil, err
		}
		out = le.AppendUint32(out, v)
	}
	for range vlen {
		for _, f := range l.PerMember {
			v, err := u.field(f)
			if err != nil {
				return nil, err
			}
			out = le.AppendUint32(out, v)
		}
	}
	return out, nil
}

// next returns the next piece of raw BTF, or io.EOF after the last. A type
// record is built in a buffer reused by the next call; header and strings
// are slices of the packed form. Callers must not modify the piece.
func (u *unpacker) next() ([]byte, error) {
	switch {
	case !u.headerOut:
		u.headerOut = true
		return u.hdr, nil
	case len(u.kinds) > 0:
		rec, err := u.record(u.scratch[:0])
		u.scratch = rec
		return rec, err
	case !u.stringsOut:
		if u.done != u.typeLen || len(u.names) != 0 || len(u.refs) != 0 || len(u.nums) != 0 {
			return nil, fmt.Errorf("%w: columns do not add up to the type section", errPacked)
		}
		u.stringsOut = true
		return u.strs, nil
	}
	return nil, io.EOF
}

// Unpack reverses Pack. rawLen is the expected size of the result.
func Unpack(packed []byte, rawLen int) ([]byte, error) {
	u, err := newUnpacker(packed, rawLen)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, rawLen)
	for {
		piece, err := u.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, piece...)
	}
}

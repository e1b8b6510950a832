package generator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// A part is untrusted input, decoded by json.Unmarshal, and JSON's sizes
// are not Go's: "{}" is 3 bytes of a list and a 112-byte ProgramReport
// once decoded (more while the slice grows), `""` 3 bytes and a 16-byte
// string header. Issue 33's part, 30 MB of 10 million empty program rows,
// took merge to 4.2 GiB of peak RSS and a 3.8 GB report, rc 0. So a part
// is measured before it is decoded (decodedSize), and refused if it would
// take more than this many times its size, plus partSlack.
//
// What a part btfembed writes takes is well under it: its blobs decode
// to three quarters of their base64, and a report row, whose JSON spells
// every field name, to about its JSON's size (TestPartDecodedSize
// measures the testdata parts).
const (
	partDecodeFactor = 4
	partSlack        = 64 << 10
)

// Bounds on the report rows of the parts one Merge joins, counting a row
// list once for every kernel that refers to it: what the merged report
// writes and the payload's verdicts are made from. A real kernel has one
// row per program and per relocation that does not resolve or needs the
// kernel's type IDs: on the testdata corpus, the testdata objects with
// the big object (399 programs, 33,857 relocations) have at most 1,719
// rows a kernel, and 4,000 such kernels 6.9 million rows.
const (
	maxKernelRows = 1 << 20 // one kernel's rows
	maxRows       = 1 << 24 // all kernels' rows: 1.6 GB of report in empty rows
)

// checkPartSize refuses a part's JSON body that would take more than
// partDecodeFactor times its size to decode into a partWire. Input that
// decodedSize finds is not JSON is left to json.Unmarshal, which checks
// the whole input before it allocates anything and says where it is
// wrong.
func checkPartSize(body []byte) error {
	size, err := decodedSize(body, reflect.TypeFor[partWire]())
	if errors.Is(err, errNotJSON) {
		return nil
	}
	if err != nil {
		return err
	}
	if limit := partDecodeFactor*int64(len(body)) + partSlack; size > limit {
		return fmt.Errorf("decoding it would take %d MiB, more than %d times its %d bytes: no part btfembed writes does",
			size>>20, partDecodeFactor, len(body))
	}
	return nil
}

// errNotJSON is decodedSize's error for input that is not JSON; it may
// also return a size for such input (it does not check everything).
var errNotJSON = errors.New("not JSON")

// decodedSize returns an upper bound of the memory json.Unmarshal keeps
// once it has decoded the JSON data into a value of type t: each slice's
// backing array at the capacity its growth gives it (grownCap), each
// string's and base64 []byte's bytes, each pointer's target. It walks the
// JSON alongside t and allocates nothing (but for a key with escapes);
// values json.Unmarshal skips (unknown keys, a value of the wrong kind,
// array elements beyond a Go array's length) count nothing. t may hold
// no map or interface (a part does not). It reads JSON's syntax only as
// far as it needs to, which is enough for JSON that json.Unmarshal
// accepts; on other input it may return errNotJSON.
func decodedSize(data []byte, t reflect.Type) (int64, error) {
	s := &sizer{data: data, fields: map[reflect.Type]map[string]reflect.StructField{}}
	return s.value(t, 0)
}

type sizer struct {
	data   []byte
	pos    int
	fields map[reflect.Type]map[string]reflect.StructField // by JSON name
}

// maxDepth is encoding/json's limit on nesting: deeper input is not JSON
// it accepts, and stopping there keeps the recursion bounded.
const maxDepth = 10000

// value measures the JSON value at pos, decoded into t (nil: skipped),
// and moves past it.
func (s *sizer) value(t reflect.Type, depth int) (int64, error) {
	if depth > maxDepth {
		return 0, errNotJSON
	}
	var size int64
	for t != nil && t.Kind() == reflect.Pointer && s.peek() != 'n' {
		size += int64(t.Elem().Size())
		t = t.Elem()
	}
	if t != nil && (t.Kind() == reflect.Map || t.Kind() == reflect.Interface) {
		return 0, fmt.Errorf("decodedSize: %s not supported", t)
	}
	switch s.peek() {
	case '"':
		str, err := s.str()
		switch {
		case t == nil:
		case t.Kind() == reflect.String:
			size += int64(len(str))
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
			size += int64(len(str)) // base64: fewer bytes
		}
		return size, err
	case '[':
		return s.array(t, size, depth)
	case '{':
		return s.object(t, size, depth)
	}
	start := s.pos
	for s.pos < len(s.data) && !delimiter[s.data[s.pos]] {
		s.pos++ // number, true, false, null
	}
	if s.pos == start {
		return 0, errNotJSON
	}
	return size, nil
}

// delimiter are the bytes that end a number or a literal.
var delimiter = [256]bool{',': true, ']': true, '}': true, ':': true, ' ': true, '\t': true, '\r': true, '\n': true}

func (s *sizer) array(t reflect.Type, size int64, depth int) (int64, error) {
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	n := 0
	err := s.members(func() error {
		into := elem
		if t != nil && t.Kind() == reflect.Array && n >= t.Len() {
			into = nil // json.Unmarshal drops what a Go array cannot hold
		}
		v, err := s.value(into, depth+1)
		size += v
		n++
		return err
	})
	if elem != nil && t.Kind() == reflect.Slice {
		size += grownCap(n) * int64(elem.Size())
	}
	return size, err
}

// grownCap bounds the capacity of a slice json.Unmarshal grew to n
// elements one at a time (reflect.Value.Grow, as append): the runtime
// doubles it up to 256 elements, then adds a quarter and 192 (growslice
// in runtime/slice.go), and rounds the allocation up to its size class,
// an eighth at most.
func grownCap(n int) int64 {
	switch {
	case n == 0:
		return 0
	case n <= 256:
		c := int64(1)
		for c < int64(n) {
			c *= 2
		}
		return c + c/8
	}
	c := int64(n) + int64(n)/4 + 192
	return c + c/8
}

func (s *sizer) object(t reflect.Type, size int64, depth int) (int64, error) {
	if t != nil && t.Kind() != reflect.Struct {
		t = nil // the wrong kind: skipped
	}
	fields, err := s.fieldsOf(t)
	if err != nil {
		return 0, err
	}
	err = s.members(func() error {
		key, err := s.key()
		if err != nil {
			return err
		}
		var into reflect.Type
		if f, ok := fields[string(key)]; ok {
			into = f.Type
		} else if t != nil {
			// encoding/json falls back to a case-insensitive match.
			for name, f := range fields {
				if strings.EqualFold(name, string(key)) {
					into = f.Type
					break
				}
			}
		}
		if s.peek() != ':' {
			return errNotJSON
		}
		s.pos++
		v, err := s.value(into, depth+1)
		size += v
		return err
	})
	return size, err
}

// members calls f for each element of the array or object at pos, which
// f reads, and moves past its end.
func (s *sizer) members(f func() error) error {
	s.pos++ // '[' or '{'
	for {
		switch s.peek() {
		case ']', '}':
			s.pos++
			return nil
		case ',':
			s.pos++
		case 0:
			return errNotJSON
		}
		if err := f(); err != nil {
			return err
		}
	}
}

// key reads an object's key, unquoted.
func (s *sizer) key() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errNotJSON
	}
	raw, err := s.str()
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	var key string
	if err := json.Unmarshal(raw, &key); err != nil {
		return nil, errNotJSON
	}
	return []byte(key), nil
}

// str reads the string at pos, quotes included.
func (s *sizer) str() ([]byte, error) {
	start := s.pos
	s.pos++
	for {
		i := bytes.IndexByte(s.data[s.pos:], '"')
		if i < 0 {
			s.pos = len(s.data)
			return s.data[start : start+1], errNotJSON
		}
		s.pos += i + 1
		escapes := 0
		for j := s.pos - 2; j > start && s.data[j] == '\\'; j-- {
			escapes++
		}
		if escapes%2 == 0 {
			return s.data[start:s.pos], nil
		}
	}
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *sizer) peek() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// fieldsOf maps the JSON names of struct t's fields to them; nil t, nil.
func (s *sizer) fieldsOf(t reflect.Type) (map[string]reflect.StructField, error) {
	if t == nil {
		return nil, nil
	}
	if m, ok := s.fields[t]; ok {
		return m, nil
	}
	m := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, fmt.Errorf("decodedSize: embedded field %s of %s not supported", f.Name, t)
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f
	}
	s.fields[t] = m
	return m, nil
}

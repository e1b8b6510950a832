package generator

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// WriteJSON writes the report as indented JSON, the bytes a json.Encoder
// with a two-space indent writes. The document is built field by field,
// in the order and by the json tags of Report's fields, and the kernels
// are written one at a time: the whole document, 40 KB a kernel with a
// dozen objects, is never in memory, only each distinct row list once.
func (r *Report) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	err := writeObject(bw, reflect.ValueOf(r).Elem(), "", func(f reflect.StructField, v reflect.Value) ([]byte, error) {
		if f.Name == "Kernels" && len(r.Kernels) > 0 {
			return nil, writeKernelsJSON(bw, r.Kernels)
		}
		return json.MarshalIndent(v.Interface(), "  ", "  ")
	})
	if err != nil {
		return err
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// writeObject writes struct v as an indented JSON object whose closing
// brace is at indent, its fields in order, by their json tags;
// value marshals one field's value at indent plus two spaces, or writes
// it itself and returns nil bytes.
func writeObject(bw *bufio.Writer, v reflect.Value, indent string, value func(reflect.StructField, reflect.Value) ([]byte, error)) error {
	bw.WriteString("{")
	first := true
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") && v.Field(i).IsZero() {
			continue
		}
		if !first {
			bw.WriteString(",")
		}
		first = false
		key, err := json.Marshal(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "\n%s  %s: ", indent, key)
		val, err := value(f, v.Field(i))
		if err != nil {
			return fmt.Errorf("report JSON: %s: %w", name, err)
		}
		bw.Write(val)
	}
	bw.WriteString("\n" + indent + "}")
	return nil
}

// writeKernelsJSON writes the kernels array, one kernel at a time. The
// kernels of a series share their row lists (sharer), which are most of
// a report (600 KB for 12 kernels), so each distinct list is marshalled
// once and its bytes written again for the others.
func writeKernelsJSON(bw *bufio.Writer, kernels []KernelReport) error {
	type list struct {
		first any // the list's first row, by address
		n     int
	}
	lists := map[list][]byte{}
	bw.WriteString("[")
	for i := range kernels {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		err := writeObject(bw, reflect.ValueOf(&kernels[i]).Elem(), "    ", func(f reflect.StructField, v reflect.Value) ([]byte, error) {
			if v.Kind() != reflect.Slice || v.Len() == 0 {
				return json.MarshalIndent(v.Interface(), "      ", "  ")
			}
			k := list{v.Index(0).Addr().Interface(), v.Len()}
			if b, ok := lists[k]; ok {
				return b, nil
			}
			b, err := json.MarshalIndent(v.Interface(), "      ", "  ")
			lists[k] = b
			return b, err
		})
		if err != nil {
			return fmt.Errorf("report JSON: kernel %s: %w", kernels[i].key(), err)
		}
	}
	bw.WriteString("\n  ]")
	return nil
}

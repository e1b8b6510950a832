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
// are marshalled one at a time: the whole document, 40 KB a kernel with a
// dozen objects, is never in memory.
func (r *Report) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{")
	v := reflect.ValueOf(r).Elem()
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
		fmt.Fprintf(bw, "\n  %s: ", key)
		if f.Name == "Kernels" && len(r.Kernels) > 0 {
			if err := writeKernelsJSON(bw, r.Kernels); err != nil {
				return err
			}
			continue
		}
		val, err := json.MarshalIndent(v.Field(i).Interface(), "  ", "  ")
		if err != nil {
			return fmt.Errorf("report JSON: %s: %w", name, err)
		}
		bw.Write(val)
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// writeKernelsJSON writes the kernels array, one kernel marshalled at a
// time.
func writeKernelsJSON(bw *bufio.Writer, kernels []KernelReport) error {
	bw.WriteString("[")
	for i := range kernels {
		k, err := json.MarshalIndent(&kernels[i], "    ", "  ")
		if err != nil {
			return fmt.Errorf("report JSON: kernel %s: %w", kernels[i].key(), err)
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(k)
	}
	bw.WriteString("\n  ]")
	return nil
}

package generator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// kernelsKey opens the kernels in the report's JSON: a top-level key on
// its own line, which no string can hold, since JSON escapes a string's
// newlines and quotes.
const kernelsKey = "\n  \"kernels\": "

// WriteJSON writes the report as indented JSON, the bytes a json.Encoder
// with a two-space indent writes for it. It marshals the report without
// its kernels, then writes the kernels where that has null, marshalling
// one at a time: the whole document, 40 KB a kernel with a dozen objects,
// is never in memory.
func (r *Report) WriteJSON(w io.Writer) error {
	head := *r
	head.Kernels = nil
	doc, err := json.MarshalIndent(&head, "", "  ")
	if err != nil {
		return fmt.Errorf("report JSON: %w", err)
	}
	bw := bufio.NewWriter(w)
	if r.Kernels != nil {
		i := bytes.Index(doc, []byte(kernelsKey+"null"))
		if i < 0 {
			return errors.New("report JSON: no kernels key")
		}
		i += len(kernelsKey)
		bw.Write(doc[:i])
		if err := writeKernelsJSON(bw, r.Kernels); err != nil {
			return err
		}
		doc = doc[i+len("null"):]
	}
	bw.Write(doc)
	bw.WriteByte('\n')
	return bw.Flush()
}

// writeKernelsJSON writes the kernels array, one kernel at a time,
// indented as the report's second level.
func writeKernelsJSON(bw *bufio.Writer, kernels []KernelReport) error {
	bw.WriteByte('[')
	for i := range kernels {
		b, err := json.MarshalIndent(&kernels[i], "    ", "  ")
		if err != nil {
			return fmt.Errorf("report JSON: kernel %s: %w", kernels[i].key(), err)
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(b)
	}
	if len(kernels) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteByte(']')
	return nil
}

package vmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// recordPrefix starts every result line the guest prints on the serial
// console. Kernel messages and anything else on the console are not
// records; a record line is one JSON object after the prefix.
const recordPrefix = "@btfembed-vmtest "

// Record is one result the guest reported.
type Record struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Decode unmarshals the record's data into v.
func (r Record) Decode(v any) error {
	if err := json.Unmarshal(r.Data, v); err != nil {
		return fmt.Errorf("record %q: %w", r.Kind, err)
	}
	return nil
}

// KindDone is the record Guest.Done writes last; a boot without it did not
// finish (the guest crashed, hung or the kernel panicked).
const KindDone = "done"

// Emit writes one record line to w (the guest's console). It is what the
// guest side uses; a line is written with a single Write so that it is not
// split by other writers of the console.
func Emit(w io.Writer, kind string, data any) error {
	var raw json.RawMessage
	if data != nil {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return fmt.Errorf("record %q: %w", kind, err)
		}
	}
	line, err := json.Marshal(Record{Kind: kind, Data: raw})
	if err != nil {
		return fmt.Errorf("record %q: %w", kind, err)
	}
	_, err = w.Write(append(append([]byte("\n"+recordPrefix), line...), '\n'))
	return err
}

// parseRecords returns the records in console output, in order. A line
// that carries the prefix but no valid JSON (a kernel message written into
// the middle of it) is an error: results must not be lost silently.
func parseRecords(console []byte) ([]Record, error) {
	var recs []Record
	for line := range bytes.Lines(console) {
		i := bytes.Index(line, []byte(recordPrefix))
		if i < 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(bytes.TrimRight(line[i+len(recordPrefix):], "\r\n"), &r); err != nil {
			return recs, fmt.Errorf("garbled record line %q: %w", line, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

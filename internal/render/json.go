package render

import (
	"encoding/json"
	"fmt"
	"io"
)

// encodeJSON is the JSON writer of every report but traces (which streams its samples): the
// report's structs are the schema, and their constructors in package report keep its
// promises (lists are [], never null), so that this only encodes.
func encodeJSON[R any](w io.Writer, r R, _ Options) error {
	return writeJSON(w, r)
}

// writeJSON writes v as one indented JSON document with a trailing newline, without HTML
// escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

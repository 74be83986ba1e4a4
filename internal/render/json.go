package render

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/profq/profq/internal/report"
)

// topJSON writes t as one indented JSON document. The struct tags of report.Top are the schema;
// this only makes sure that absent lists print as [] rather than null.
func topJSON(w io.Writer, t *report.Top) error {
	doc := *t // a shallow copy: the caller's value is never modified
	doc.Warnings = nonNil(t.Warnings)
	doc.Rows = nonNil(t.Rows)
	doc.Options.Filters = nonNil(t.Options.Filters)
	doc.Profile.Comments = nonNil(t.Profile.Comments)
	doc.Inputs = nonNil(t.Inputs) // each Input writes its own lists as []

	return writeJSON(w, &doc)
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

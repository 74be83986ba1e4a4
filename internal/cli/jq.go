package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/itchyny/gojq"
)

// jqFilter is a compiled --jq expression. It is run by an embedded jq (gojq), so that
// scripts get the same filtering whether or not jq is installed.
type jqFilter struct {
	expr string
	code *gojq.Code
}

// compileJQ parses and compiles expr. Both failures are usage errors: the expression is
// part of the command line.
func compileJQ(expr string) (*jqFilter, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			return nil, usageErrorf("--jq: parsing %q: %v at offset %d", expr, err, pe.Offset)
		}
		return nil, usageErrorf("--jq: parsing %q: %v", expr, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, usageErrorf("--jq: compiling %q: %v", expr, err)
	}
	return &jqFilter{expr: expr, code: code}, nil
}

// errJQHalt is a query that called halt: it wants no more output, which is not a failure.
var errJQHalt = errors.New("jq halted")

// run applies the filter to one JSON value and writes each result on its own line, as
// `jq -r -c` does: strings raw, anything else as compact JSON. Numbers keep every digit
// (int64 values are not rounded through float64). A runtime error of the query is a usage
// error; halt is errJQHalt.
func (f *jqFilter) run(w io.Writer, doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("--jq: reading the report as JSON: %w", err)
	}
	return f.runValue(w, v)
}

// runValue is run on a value already decoded as encoding/json decodes with UseNumber
// (objects map[string]any, arrays []any, numbers json.Number). v is not modified.
func (f *jqFilter) runValue(w io.Writer, v any) error {
	var out []byte
	iter := f.code.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := r.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				if _, werr := w.Write(out); werr != nil {
					return werr
				}
				return errJQHalt
			}
			// What the query printed before failing is kept, as jq prints it.
			if _, werr := w.Write(out); werr != nil {
				return werr
			}
			return usageErrorf("--jq: %q: %v", f.expr, err)
		}
		if s, ok := r.(string); ok {
			out = append(out, s...)
		} else {
			b, err := gojq.Marshal(r)
			if err != nil {
				return usageErrorf("--jq: %q: %v", f.expr, err)
			}
			out = append(out, b...)
		}
		out = append(out, '\n')
	}
	_, err := w.Write(out)
	return err
}

// jqWriter runs a filter over what a renderer writes: on every line (an ndjson record) as it
// arrives, or on the whole output (one JSON document) when closed. The first error, of the
// query or of w, is kept and returned by every later Write, which stops the renderer.
type jqWriter struct {
	f       *jqFilter
	w       io.Writer
	perLine bool
	buf     []byte
	err     error
}

func newJQWriter(f *jqFilter, w io.Writer, perLine bool) *jqWriter {
	return &jqWriter{f: f, w: w, perLine: perLine}
}

func (j *jqWriter) Write(p []byte) (int, error) {
	if j.err != nil {
		return 0, j.err
	}
	j.buf = append(j.buf, p...)
	if !j.perLine {
		return len(p), nil
	}
	rest := j.buf
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		if line := rest[:i]; len(bytes.TrimSpace(line)) > 0 {
			if j.err = j.f.run(j.w, line); j.err != nil {
				return 0, j.err
			}
		}
		rest = rest[i+1:]
	}
	j.buf = append(j.buf[:0], rest...)
	return len(p), nil
}

// Close filters what is left: the whole document, or a last line without a newline.
func (j *jqWriter) Close() error {
	if j.err != nil {
		return j.err
	}
	if len(bytes.TrimSpace(j.buf)) > 0 {
		j.err = j.f.run(j.w, j.buf)
	}
	j.buf = nil
	return j.err
}

package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/profq/profq/internal/render"
)

// This file is where every report goes: the output flags, the rendering through the terminal
// filter and --jq, standard output (a closed pipe ends a report as a success) and files
// written atomically (outfile.go).

// outputFlags are --format, --output and --jq: where a report goes and in which form. Every
// command writes its report through write (or stream), which is also where a closed stdout
// pipe and --jq are handled, once for all commands.
type outputFlags struct {
	// kind is the report's kind: --format takes the formats render writes it in. Commands
	// without --format (convert) leave it "".
	kind   string
	format render.Format
	path   string
	jq     string

	fs    *pflag.FlagSet // to tell an explicit --format from the default
	query *jqFilter      // compiled by validate
}

func addOutputFlags(fs *pflag.FlagSet, o *outputFlags) {
	o.fs = fs
	names := render.FormatNames(o.kind)
	fs.StringVar((*string)(&o.format), "format", names[0], "output format: "+strings.Join(names, ", "))
	fs.StringVarP(&o.path, "output", "o", "", "write the report to this file instead of standard output")
	fs.StringVar(&o.jq, "jq", "", "filter the JSON report through this jq expression (implies --format json); each result on its own line, strings raw")
}

// validate checks --format and compiles --jq. It must run before the report is rendered:
// --jq without --format selects the json format.
func (o *outputFlags) validate() error {
	if o.jq != "" {
		explicit := o.fs != nil && o.fs.Changed("format")
		switch {
		case !explicit:
			o.format = render.JSON
		case o.format != render.JSON && o.format != render.NDJSON:
			return usageErrorf("--jq filters JSON: it cannot be used with --format %s", o.format)
		}
		if !render.Supports(o.kind, o.format) {
			return usageErrorf("--jq filters JSON, and this report has no %s format", o.format)
		}
		q, err := compileJQ(o.jq)
		if err != nil {
			return err
		}
		o.query = q
	}
	if o.kind != "" && !render.Supports(o.kind, o.format) {
		return usageErrorf("--format: %q is not one of %s", o.format, strings.Join(render.FormatNames(o.kind), ", "))
	}
	return nil
}

// write renders the whole report first, so that a failure (of the renderer or of --jq) leaves
// nothing on stdout and no partial file; a file is written to a temporary name and renamed
// into place. A reader that closed stdout early (profq ... | head) has what it wanted: that
// is success, not an error (see Main).
func (o *outputFlags) write(stdio IO, renderTo func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := o.safe(&buf, renderTo); err != nil {
		return err
	}
	if o.query != nil {
		var out bytes.Buffer
		jq := newJQWriter(o.query, &out, o.format == render.NDJSON)
		if _, err := jq.Write(buf.Bytes()); err != nil && !errors.Is(err, errJQHalt) {
			return err
		}
		if err := jq.Close(); err != nil && !errors.Is(err, errJQHalt) {
			return err
		}
		buf = out
	}
	if o.path == "" || o.path == "-" {
		if _, err := stdio.Out.Write(buf.Bytes()); err != nil {
			if errors.Is(err, syscall.EPIPE) {
				return nil
			}
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	return writeFileAtomic(stdio, o.path, buf.Bytes())
}

// report writes a report model through write, in the format the flags chose. A run that
// captures its report (runState.capture, set by profq mcp) hands the model and a way to
// render it in any format to the capture instead: nothing is written.
func (o *outputFlags) report(stdio IO, model any, renderTo func(w io.Writer, format render.Format) error) error {
	if stdio.run != nil && stdio.run.capture != nil {
		return stdio.run.capture(model, renderTo)
	}
	return o.write(stdio, func(w io.Writer) error { return renderTo(w, o.format) })
}

// safe runs render on w as safeRender does; --jq output is the query's.
func (o *outputFlags) safe(w io.Writer, renderTo func(io.Writer) error) error {
	if o.query != nil {
		return renderTo(w)
	}
	return safeRender(w, o.format, renderTo)
}

// safeRender runs renderTo on w, through render.SafeText when output in format is for a
// terminal (a table, markdown, DOT), so that no name in a profile can send the terminal
// escape sequences.
func safeRender(w io.Writer, format render.Format, renderTo func(io.Writer) error) error {
	if !format.Terminal() {
		return renderTo(w)
	}
	st := render.NewSafeText(w)
	if err := renderTo(st); err != nil {
		return err
	}
	return st.Close()
}

// stream writes a report that render produces piece by piece, as it produces it, through a
// buffer: for reports too large to hold (traces). A failure can leave part of the report on
// stdout, never a partial file. With --jq, ndjson is filtered record by record and a JSON
// document as a whole. The first write to a closed stdout pipe stops the report, quietly.
func (o *outputFlags) stream(stdio IO, renderTo func(io.Writer) error) error {
	return o.streamTo(stdio, renderTo, o.query)
}

// streamRecords is stream for --format ndjson --jq when the report can hand over its records
// as values (see render.TraceRecords): the query runs on each record without the records
// being encoded as text and parsed back. Without --jq, or in another format, it is an
// internal error to call it.
func (o *outputFlags) streamRecords(stdio IO, records func(emit func(any) error) error) error {
	if o.query == nil || o.format != render.NDJSON {
		return fmt.Errorf("internal error: records streamed without --jq on ndjson")
	}
	q := o.query
	return o.streamTo(stdio, func(w io.Writer) error {
		return records(func(v any) error { return q.runValue(w, v) })
	}, nil)
}

// streamTo is stream, filtering what render writes through query when it is not nil.
func (o *outputFlags) streamTo(stdio IO, renderTo func(io.Writer) error, query *jqFilter) error {
	sink := &pipeSink{w: stdio.Out}
	var dest io.Writer = sink
	var file *atomicFile
	if o.path != "" && o.path != "-" {
		var err error
		if file, err = createAtomic(stdio, o.path); err != nil {
			return err
		}
		defer file.abort() // no-op once committed
		dest = file.f
	}
	bw := bufio.NewWriterSize(dest, 256<<10)
	var w io.Writer = bw
	var jq *jqWriter
	if query != nil {
		jq = newJQWriter(query, bw, o.format == render.NDJSON)
		w = jq
	}
	err := o.safe(w, renderTo)
	if jq != nil {
		if cerr := jq.Close(); cerr != nil {
			// The query's own error explains a failed render better than the renderer's
			// wrapping of it.
			err = cerr
		}
	}
	var usage *usageError
	if errors.As(err, &usage) {
		// A query's error, returned through the renderer: say it as it is.
		err = usage
	}
	if errors.Is(err, errJQHalt) {
		err = nil
	}
	if err == nil {
		err = bw.Flush()
	}
	switch {
	case sink.closed:
		return nil
	case err != nil && file != nil && usage == nil:
		return fmt.Errorf("writing %s: %w", o.path, err)
	case err != nil:
		return err
	case file != nil:
		return file.commit()
	}
	return nil
}

// pipeSink is stdout for stream: it remembers that the reader closed the pipe (EPIPE), which
// ends the report as a success.
type pipeSink struct {
	w      io.Writer
	closed bool
}

func (s *pipeSink) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		s.closed = true
	}
	return n, err
}

func writeFileAtomic(stdio IO, path string, data []byte) error {
	a, err := createAtomic(stdio, path)
	if err != nil {
		return err
	}
	defer a.abort() // no-op once committed
	if _, err := a.f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return a.commit()
}

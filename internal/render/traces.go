package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// TracesFormats returns the output formats of the traces report, the first being the
// default. Each call returns a new slice.
func TracesFormats() []string {
	return []string{"table", "json", "ndjson", "folded"}
}

// TracesOptions controls how a traces report is written.
type TracesOptions struct {
	// Format is one of TracesFormats; "" means "table".
	Format string
	// Unit is the unit of the table's values: "minimum" (the default, also for "") and
	// "auto" scale each value on its own, as pprof -traces does; anything else (ms, MB, ...)
	// forces that unit. The other formats carry raw values in the sample unit.
	Unit string
}

// Traces writes the report s to w in the format o.Format, one sample at a time: nothing
// but the current sample and one encoding per distinct frame is held, whatever the size of
// the profile. Each sample is one Write, so w should be buffered. The first write error
// stops the report and is returned.
func Traces(w io.Writer, s *report.TraceStream, o TracesOptions) error {
	if s == nil {
		return fmt.Errorf("rendering traces: no report")
	}
	var err error
	switch o.Format {
	case "", "table":
		err = tracesTable(w, s, o)
	case "json":
		err = tracesJSON(w, s)
	case "ndjson":
		err = tracesNDJSON(w, s)
	case "folded":
		err = tracesFolded(w, s)
	default:
		return fmt.Errorf("unknown format %q for traces (want one of %v)", o.Format, TracesFormats())
	}
	if err != nil {
		return fmt.Errorf("writing traces: %w", err)
	}
	return nil
}

// traceSeparator is the line pprof prints before every sample and after the last one.
const traceSeparator = "-----------+-------------------------------------------------------\n"

// tracesTable writes pprof's -traces text: the profile's header lines, then for each sample
// a separator, its string and numeric labels, and its frames leaf first with the value on
// the first one.
func tracesTable(w io.Writer, s *report.TraceStream, o TracesOptions) error {
	h := s.Header()
	unit := o.Unit
	if unit == "" {
		unit = units.Minimum
	}
	value := func(v int64) string { return units.ScaledLabel(v, h.SampleType.Unit, unit) }
	if _, err := io.WriteString(w, strings.Join(profileLabels(h.Profile, h.SampleType, h.Total, value), "\n")+"\n"); err != nil {
		return err
	}

	lines := make([][]byte, s.FrameCount()) // per frame: "   name[ (inline)]\n"
	frameLine := func(f *report.Frame) []byte {
		if f.ID >= 0 && lines[f.ID] != nil {
			return lines[f.ID]
		}
		b := append([]byte("   "), traceTextName(f.Name)...)
		if f.Inline {
			b = append(b, " (inline)"...)
		}
		b = append(b, '\n')
		if f.ID >= 0 {
			lines[f.ID] = b
		}
		return b
	}
	var (
		buf    []byte
		labels []string
		cache  = newTraceTextCache()
	)
	err := s.Each(func(ts *report.TraceSample) error {
		buf = append(buf[:0], traceSeparator...)
		// pprof sorts each group of label lines as whole formatted lines, padding included.
		labels = labels[:0]
		for k, vs := range ts.Labels {
			labels = append(labels, cache.label(k, vs))
		}
		slices.Sort(labels)
		for _, l := range labels {
			buf = append(buf, l...)
		}
		labels = labels[:0]
		for k, nls := range ts.NumLabels {
			labels = append(labels, cache.numLabel(k, nls))
		}
		slices.Sort(labels)
		for _, l := range labels {
			buf = append(buf, l...)
		}
		for i := range ts.Frames {
			if i == 0 {
				buf = append(buf, cache.value(ts.Value, value)...)
			} else {
				buf = append(buf, "          "...)
			}
			buf = append(buf, frameLine(&ts.Frames[i])...)
		}
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, traceSeparator)
	return err
}

// traceTextCache remembers formatted label lines and values, which repeat from sample to
// sample, so that the table costs no allocation per sample. It stops growing at
// maxTraceTextCache entries of each kind, so that labels unique to each sample (request IDs)
// cannot make it hold the whole profile.
type traceTextCache struct {
	labels    map[string]map[string]string
	numLabels map[string]map[report.NumLabel]string
	values    map[int64]string
	n         int
}

const maxTraceTextCache = 1 << 16

func newTraceTextCache() *traceTextCache {
	return &traceTextCache{
		labels:    map[string]map[string]string{},
		numLabels: map[string]map[report.NumLabel]string{},
		values:    map[int64]string{},
	}
}

// labelLine formats one label as pprof: "%10s:  %s\n", values joined by spaces.
func labelLine(key, values string) string {
	return traceTextName(fmt.Sprintf("%10s:  %s", key, values)) + "\n"
}

func (c *traceTextCache) label(key string, vs []string) string {
	if len(vs) != 1 {
		return labelLine(key, strings.Join(vs, " "))
	}
	if l, ok := c.labels[key][vs[0]]; ok {
		return l
	}
	l := labelLine(key, vs[0])
	if c.n < maxTraceTextCache {
		if c.labels[key] == nil {
			c.labels[key] = map[string]string{}
		}
		c.labels[key][vs[0]] = l
		c.n++
	}
	return l
}

func (c *traceTextCache) numLabel(key string, nls []report.NumLabel) string {
	if len(nls) == 1 {
		if l, ok := c.numLabels[key][nls[0]]; ok {
			return l
		}
	}
	vs := make([]string, len(nls))
	for i, nl := range nls {
		vs[i] = units.Label(nl.Value, nl.Unit)
	}
	l := labelLine(key, strings.Join(vs, " "))
	if len(nls) == 1 && c.n < maxTraceTextCache {
		if c.numLabels[key] == nil {
			c.numLabels[key] = map[report.NumLabel]string{}
		}
		c.numLabels[key][nls[0]] = l
		c.n++
	}
	return l
}

// value formats a sample value as the first column: right-aligned in ten characters.
func (c *traceTextCache) value(v int64, format func(int64) string) string {
	if s, ok := c.values[v]; ok {
		return s
	}
	s := fmt.Sprintf("%10s", format(v))
	if len(c.values) < maxTraceTextCache {
		c.values[v] = s
	}
	return s
}

// traceTextName keeps a name on its line: pprof prints names raw, but a line break in one would
// split the frame in two, so line breaks become spaces (as in top tables).
func traceTextName(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// profileLabels are pprof's ProfileLabels, the header lines every text report starts with
// (the only ones -traces prints), with the differences top tables make: Time in UTC, and no
// trailing space on the Duration line. value formats total.
func profileLabels(p report.ProfileInfo, st report.SampleType, total int64, value func(int64) string) []string {
	var lines []string
	if p.File != "" {
		lines = append(lines, "File: "+p.File)
	}
	if p.BuildID != "" {
		lines = append(lines, "Build ID: "+p.BuildID)
	}
	lines = append(lines, p.Comments...)
	if st.Type != "" {
		lines = append(lines, "Type: "+st.Type)
	}
	if p.TimeNanos != 0 {
		lines = append(lines, "Time: "+time.Unix(0, p.TimeNanos).UTC().Format("2006-01-02 15:04:05 MST"))
	}
	if p.DurationNanos != 0 {
		l := "Duration: " + units.Label(p.DurationNanos, "nanoseconds") + ", Total samples = " + value(total)
		if ns, unit := units.Scale(total, st.Unit, "nanoseconds"); unit == "ns" && ns != 0 {
			l += " (" + units.Percentage(int64(ns), p.DurationNanos) + ")"
		}
		lines = append(lines, l)
	}
	return lines
}

// tracesFolded writes one "root;...;leaf value" line per sample, in profile order, for
// flame-graph tools. Identical stacks are not merged (that would mean holding every stack;
// flame-graph tools add up repeated stacks themselves) and zero-valued samples, which draw
// nothing, are left out. Frame names are printed without inline markers, with ';' written
// as ':' and line breaks as spaces, so that a name can neither split a frame nor a line.
func tracesFolded(w io.Writer, s *report.TraceStream) error {
	names := make([][]byte, s.FrameCount())
	name := func(f *report.Frame) []byte {
		if f.ID >= 0 && names[f.ID] != nil {
			return names[f.ID]
		}
		b := []byte(traceFoldedName(f.Name))
		if f.ID >= 0 {
			names[f.ID] = b
		}
		return b
	}
	var buf []byte
	return s.Each(func(ts *report.TraceSample) error {
		if ts.Value == 0 {
			return nil
		}
		buf = buf[:0]
		for i := len(ts.Frames) - 1; i >= 0; i-- {
			buf = append(buf, name(&ts.Frames[i])...)
			if i > 0 {
				buf = append(buf, ';')
			}
		}
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, ts.Value, 10)
		buf = append(buf, '\n')
		_, err := w.Write(buf)
		return err
	})
}

// traceFoldedName makes a frame name safe for the folded format, as stackcollapse-perf.pl does
// for ';'.
func traceFoldedName(s string) string {
	if !strings.ContainsAny(s, ";\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case ';':
			return ':'
		case '\n', '\r':
			return ' '
		}
		return r
	}, s)
}

// tracesNDJSON writes the header as one line, then one line per sample: a TraceRecord.
func tracesNDJSON(w io.Writer, s *report.TraceStream) error {
	h := tracesHeaderJSON(s.Header())
	line, err := marshalTraceJSON(&h, "", "")
	if err != nil {
		return err
	}
	if _, err := w.Write(append(line, '\n')); err != nil {
		return err
	}
	e := newTraceEncoder(s, "", false)
	var buf []byte
	return s.Each(func(ts *report.TraceSample) error {
		buf = e.appendSample(buf[:0], ts, true)
		buf = append(buf, '\n')
		_, err := w.Write(buf)
		return err
	})
}

// tracesJSON writes the report as one indented JSON document, sample by sample. The bytes
// are those encoding/json gives for the whole report.Traces (the tests hold that in place).
func tracesJSON(w io.Writer, s *report.TraceStream) error {
	doc := report.Traces{TracesHeader: tracesHeaderJSON(s.Header()), Samples: []report.TraceSample{}}
	head, err := marshalTraceJSON(&doc, "", "  ")
	if err != nil {
		return err
	}
	// The document ends with `"samples": []` and the closing brace: write it up to the '['.
	const tail = "[]\n}"
	if !bytes.HasSuffix(head, []byte(tail)) {
		return fmt.Errorf("unexpected end of the traces document: %q", head[max(0, len(head)-20):])
	}
	if _, err := w.Write(head[:len(head)-len(tail)+1]); err != nil {
		return err
	}
	e := newTraceEncoder(s, "    ", true)
	var buf []byte
	n := 0
	err = s.Each(func(ts *report.TraceSample) error {
		buf = buf[:0]
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		buf = append(buf, "\n    "...)
		buf = e.appendSample(buf, ts, false)
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	end := "]\n}\n"
	if n > 0 {
		end = "\n  ]\n}\n"
	}
	_, err = io.WriteString(w, end)
	return err
}

// tracesHeaderJSON makes the header's absent lists [] rather than null.
func tracesHeaderJSON(h report.TracesHeader) report.TracesHeader {
	h.Warnings = nonNil(h.Warnings)
	h.Options.Filters = nonNil(h.Options.Filters)
	h.Profile.Comments = nonNil(h.Profile.Comments)
	h.Inputs = nonNil(h.Inputs) // each Input writes its own lists as []
	return h
}

// marshalTraceJSON encodes v as encoding/json does with the given prefix and indent (compact
// when indent is ""), without HTML escaping and without a trailing newline.
func marshalTraceJSON(v any, prefix, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent(prefix, indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// traceEncoder writes TraceSamples as encoding/json would, much faster: each frame is
// encoded once and copied into every sample that holds it, and labels are written by hand.
type traceEncoder struct {
	prefix string // the indentation of the sample's opening brace
	indent bool
	colon  string
	frames [][]byte // by frame ID
	keys   []string

	scratch bytes.Buffer // where frames are encoded before being copied into frames
	enc     *json.Encoder
}

func newTraceEncoder(s *report.TraceStream, prefix string, indent bool) *traceEncoder {
	e := &traceEncoder{prefix: prefix, indent: indent, colon: ":", frames: make([][]byte, s.FrameCount())}
	if indent {
		e.colon = ": "
	}
	return e
}

// newline starts a line at the given depth below the sample's brace (indented form only).
func (e *traceEncoder) newline(b []byte, depth int) []byte {
	if !e.indent {
		return b
	}
	b = append(b, '\n')
	b = append(b, e.prefix...)
	for range depth {
		b = append(b, "  "...)
	}
	return b
}

// key writes a member name and its colon, after a comma unless first.
func (e *traceEncoder) key(b []byte, name string, depth int, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = e.newline(b, depth)
	b = appendTraceString(b, name)
	return append(b, e.colon...)
}

// appendSample appends ts as a JSON object; record adds the ndjson "kind" member first.
func (e *traceEncoder) appendSample(b []byte, ts *report.TraceSample, record bool) []byte {
	b = append(b, '{')
	first := true
	if record {
		b = e.key(b, "kind", 1, true)
		b = appendTraceString(b, report.KindTraceSample)
		first = false
	}
	b = e.key(b, "value", 1, first)
	b = strconv.AppendInt(b, ts.Value, 10)

	b = e.key(b, "labels", 1, false)
	b = appendLabelMap(e, b, ts.Labels, appendTraceString)
	b = e.key(b, "num_labels", 1, false)
	b = appendLabelMap(e, b, ts.NumLabels, func(b []byte, v report.NumLabel) []byte {
		b = append(b, '{')
		b = e.key(b, "value", 4, true)
		b = strconv.AppendInt(b, v.Value, 10)
		b = e.key(b, "unit", 4, false)
		b = appendTraceString(b, v.Unit)
		b = e.newline(b, 3)
		return append(b, '}')
	})

	b = e.key(b, "frames", 1, false)
	b = e.openArray(b, len(ts.Frames))
	for i := range ts.Frames {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.newline(b, 2)
		b = append(b, e.frame(&ts.Frames[i])...)
	}
	b = e.closeArray(b, len(ts.Frames), 1)
	b = e.newline(b, 0)
	return append(b, '}')
}

// appendLabelMap appends a sample's labels of one kind, key -> array of values, keys in
// order, each value written by value.
func appendLabelMap[V any](e *traceEncoder, b []byte, m map[string][]V, value func([]byte, V) []byte) []byte {
	e.keys = e.keys[:0]
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys)
	b = e.openObject(b, len(e.keys))
	for i, k := range e.keys {
		b = e.key(b, k, 2, i == 0)
		vs := m[k]
		b = e.openArray(b, len(vs))
		for j, v := range vs {
			if j > 0 {
				b = append(b, ',')
			}
			b = e.newline(b, 3)
			b = value(b, v)
		}
		b = e.closeArray(b, len(vs), 2)
	}
	return e.closeObject(b, len(e.keys), 1)
}

func (e *traceEncoder) openObject(b []byte, n int) []byte {
	if n == 0 {
		return append(b, "{}"...)
	}
	return append(b, '{')
}

func (e *traceEncoder) closeObject(b []byte, n, depth int) []byte {
	if n == 0 {
		return b
	}
	return append(e.newline(b, depth), '}')
}

func (e *traceEncoder) openArray(b []byte, n int) []byte {
	if n == 0 {
		return append(b, "[]"...)
	}
	return append(b, '[')
}

func (e *traceEncoder) closeArray(b []byte, n, depth int) []byte {
	if n == 0 {
		return b
	}
	return append(e.newline(b, depth), ']')
}

// frame returns f's encoding at depth 2 below the sample's brace, encoding it on first use.
func (e *traceEncoder) frame(f *report.Frame) []byte {
	if f.ID >= 0 && e.frames[f.ID] != nil {
		return e.frames[f.ID]
	}
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.scratch)
		e.enc.SetEscapeHTML(false)
		if e.indent {
			e.enc.SetIndent(e.prefix+"    ", "  ")
		}
	}
	e.scratch.Reset()
	// A Frame holds only strings, integers and a bool: encoding it cannot fail.
	_ = e.enc.Encode(f)
	b := bytes.Clone(bytes.TrimSuffix(e.scratch.Bytes(), []byte("\n")))
	if f.ID >= 0 {
		e.frames[f.ID] = b
	}
	return b
}

// appendTraceString appends s as a JSON string, exactly as encoding/json writes it without
// HTML escaping. Plain printable ASCII, which nearly every name and label is, is copied as
// it is; anything else goes through encoding/json.
func appendTraceString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			// Encoding a string cannot fail: invalid UTF-8 becomes U+FFFD.
			enc, _ := marshalTraceJSON(s, "", "")
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// TraceRecords calls emit with every record of the ndjson form of s (the header, then each
// sample) as encoding/json decodes that record's line with UseNumber: objects as
// map[string]any, arrays as []any, numbers as json.Number. It is for query engines that read
// values (--jq): they skip encoding every record as text and parsing it back. Each frame's
// value is made once and shared by every record that holds the frame, so emit must not
// modify the values it is given. emit's first error stops the walk and is returned.
func TraceRecords(s *report.TraceStream, emit func(any) error) error {
	header, err := decodeTraceValue(tracesHeaderJSON(s.Header()))
	if err != nil {
		return err
	}
	if err := emit(header); err != nil {
		return err
	}
	frames := make([]any, s.FrameCount())
	frame := func(f *report.Frame) (any, error) {
		if f.ID >= 0 && frames[f.ID] != nil {
			return frames[f.ID], nil
		}
		v, err := decodeTraceValue(f)
		if err == nil && f.ID >= 0 {
			frames[f.ID] = v
		}
		return v, err
	}
	return s.Each(func(ts *report.TraceSample) error {
		labels := make(map[string]any, len(ts.Labels))
		for k, vs := range ts.Labels {
			l := make([]any, len(vs))
			for i, v := range vs {
				l[i] = v
			}
			labels[k] = l
		}
		num := make(map[string]any, len(ts.NumLabels))
		for k, nls := range ts.NumLabels {
			l := make([]any, len(nls))
			for i, nl := range nls {
				l[i] = map[string]any{"value": jsonInt(nl.Value), "unit": nl.Unit}
			}
			num[k] = l
		}
		stack := make([]any, len(ts.Frames))
		for i := range ts.Frames {
			v, err := frame(&ts.Frames[i])
			if err != nil {
				return err
			}
			stack[i] = v
		}
		return emit(map[string]any{
			"kind":       report.KindTraceSample,
			"value":      jsonInt(ts.Value),
			"labels":     labels,
			"num_labels": num,
			"frames":     stack,
		})
	})
}

// jsonInt is v as encoding/json decodes it with UseNumber.
func jsonInt(v int64) json.Number {
	return json.Number(strconv.FormatInt(v, 10))
}

// decodeTraceValue is v encoded by encoding/json, then decoded with UseNumber.
func decodeTraceValue(v any) (any, error) {
	b, err := marshalTraceJSON(v, "", "")
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

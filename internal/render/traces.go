package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/units"
)

// Traces writes the report s to w in the format o.Format, a few hundred samples at a time,
// rendered on every core and written in order (see writeParts): nothing but the parts in
// flight, one encoding per location and one per label set is held, whatever the size of
// the profile. Each part is one Write; the header lines are small writes, so w should be
// buffered. The first write error stops the report and is returned.
func Traces(w io.Writer, s *report.TraceStream, o Options) error {
	if s == nil {
		return fmt.Errorf("rendering traces: no report")
	}
	err := write(w, report.KindTraces, s, o)
	var fe *FormatError
	if err != nil && !errors.As(err, &fe) {
		return fmt.Errorf("writing traces: %w", err)
	}
	return err
}

// traceSeparator is the line pprof prints before every sample and after the last one.
const traceSeparator = "-----------+-------------------------------------------------------\n"

// tracesTable writes pprof's -traces text: the profile's header lines, then for each sample
// a separator, its string and numeric labels, and its frames leaf first with the value on
// the first one.
func tracesTable(w io.Writer, s *report.TraceStream, o Options) error {
	return tracesTableParts(w, s, o, defaultParts(256))
}

// traceValueWidth is the width of the column of values; the lines of the frames below the
// first are indented by as many spaces.
const traceValueWidth = 10

func tracesTableParts(w io.Writer, s *report.TraceStream, o Options, cfg partsConfig) error {
	h := s.Header()
	unit := o.Unit
	if unit == "" {
		unit = units.Minimum
	}
	value := func(v int64) string { return units.ScaledLabel(v, h.SampleType.Unit, unit) }
	if _, err := io.WriteString(w, strings.Join(profileLabels(h.Profile, h.SampleType, h.Total, value), "\n")+"\n"); err != nil {
		return err
	}
	// Each location's block is its frames' lines, each after the value column's width of
	// spaces: "             name[ (inline)]\n". A sample's first line has its value there.
	blocks := newLocationBlocks(s, func() func([]byte, []report.Frame) []byte {
		return func(b []byte, frames []report.Frame) []byte {
			for i := range frames {
				b = append(b, "             "...)
				b = append(b, traceTextName(frames[i].Name)...)
				if frames[i].Inline {
					b = append(b, " (inline)"...)
				}
				b = append(b, '\n')
			}
			return b
		}
	})
	_, err := writeParts(w, s, cfg, 0, func() partRenderer {
		var (
			labels []string
			cache  = newTraceTextCache()
			sets   = newLabelSetCache(s)
			br     = blocks.reader()
		)
		return func(buf []byte, part report.TracePart) ([]byte, bool) {
			plain := true
			_ = s.EachIn(part, func(ts *report.TraceSample, set int32, positions []int32) error {
				buf = append(buf, traceSeparator...)
				// pprof sorts each group of label lines as whole formatted lines, padding
				// included.
				var plainLabels bool
				buf, plainLabels = sets.append(buf, set, func(buf []byte) []byte {
					labels = labels[:0]
					for k, vs := range ts.Labels {
						labels = append(labels, cache.label(k, vs))
					}
					buf = appendSorted(buf, labels)
					labels = labels[:0]
					for k, nls := range ts.NumLabels {
						labels = append(labels, cache.numLabel(k, nls))
					}
					return appendSorted(buf, labels)
				})
				plain = plain && plainLabels
				first := true
				for _, pos := range positions {
					lb := br.block(pos)
					b := lb.text
					if first && len(b) > 0 {
						v := cache.value(ts.Value, value)
						buf = append(buf, v...)
						plain = plain && plainText([]byte(v))
						b = b[traceValueWidth:]
						first = false
					}
					buf = append(buf, b...)
					plain = plain && lb.plain
				}
				return nil
			})
			return buf, plain
		}
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, traceSeparator)
	return err
}

// labelSetCache remembers the text of each label set of a report (its lines in a table, its
// members in JSON), which every sample of the set repeats. It holds the first
// maxTraceTextCache sets, so that labels unique to each sample cannot make it hold the whole
// profile.
type labelSetCache struct {
	text  [][]byte // by label set
	plain []bool   // plainText(text[set])
}

func newLabelSetCache(s *report.TraceStream) *labelSetCache {
	n := min(s.LabelSets()+1, maxTraceTextCache)
	return &labelSetCache{text: make([][]byte, n), plain: make([]bool, n)}
}

// append appends the text of label set set to buf: the one remembered, or the one build
// appends, remembered if there is room. It says whether the text is plain (plainText).
func (c *labelSetCache) append(buf []byte, set int32, build func([]byte) []byte) ([]byte, bool) {
	if int(set) < len(c.text) && c.text[set] != nil {
		return append(buf, c.text[set]...), c.plain[set]
	}
	from := len(buf)
	buf = build(buf)
	plain := plainText(buf[from:])
	if int(set) < len(c.text) {
		c.text[set] = append([]byte{}, buf[from:]...)
		c.plain[set] = plain
	}
	return buf, plain
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
func tracesFolded(w io.Writer, s *report.TraceStream, _ Options) error {
	return tracesFoldedParts(w, s, defaultParts(256))
}

func tracesFoldedParts(w io.Writer, s *report.TraceStream, cfg partsConfig) error {
	// Each location's block is its frames' names, outermost first, each after a ';'.
	blocks := newLocationBlocks(s, func() func([]byte, []report.Frame) []byte {
		return func(b []byte, frames []report.Frame) []byte {
			for i := len(frames) - 1; i >= 0; i-- {
				b = append(b, ';')
				b = append(b, traceFoldedName(frames[i].Name)...)
			}
			return b
		}
	})
	_, err := writeParts(w, s, cfg, 0, func() partRenderer {
		br := blocks.reader()
		return func(buf []byte, part report.TracePart) ([]byte, bool) {
			_ = s.EachIn(part, func(ts *report.TraceSample, _ int32, positions []int32) error {
				if ts.Value == 0 {
					return nil
				}
				first := true
				for i := len(positions) - 1; i >= 0; i-- {
					b := br.block(positions[i]).text
					if first && len(b) > 0 {
						b = b[1:] // no ';' before the root
						first = false
					}
					buf = append(buf, b...)
				}
				buf = append(buf, ' ')
				buf = strconv.AppendInt(buf, ts.Value, 10)
				buf = append(buf, '\n')
				return nil
			})
			return buf, false
		}
	})
	return err
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
func tracesNDJSON(w io.Writer, s *report.TraceStream, _ Options) error {
	return tracesNDJSONParts(w, s, defaultParts(128))
}

func tracesNDJSONParts(w io.Writer, s *report.TraceStream, cfg partsConfig) error {
	h := s.Header()
	line, err := marshalTraceJSON(&h, "", "")
	if err != nil {
		return err
	}
	if _, err := w.Write(append(line, '\n')); err != nil {
		return err
	}
	blocks := jsonFrameBlocks(s, "", false)
	_, err = writeParts(w, s, cfg, 0, func() partRenderer {
		e := newTraceEncoder(s, "", false)
		br := blocks.reader()
		return func(buf []byte, part report.TracePart) ([]byte, bool) {
			_ = s.EachIn(part, func(ts *report.TraceSample, set int32, positions []int32) error {
				buf = e.appendSample(buf, ts, set, positions, br, true)
				buf = append(buf, '\n')
				return nil
			})
			return buf, false
		}
	})
	return err
}

// tracesJSON writes the report as one indented JSON document, sample by sample. The bytes
// are those encoding/json gives for the whole report.Traces (the tests hold that in place).
func tracesJSON(w io.Writer, s *report.TraceStream, _ Options) error {
	return tracesJSONParts(w, s, defaultParts(96))
}

func tracesJSONParts(w io.Writer, s *report.TraceStream, cfg partsConfig) error {
	doc := report.Traces{TracesHeader: s.Header(), Samples: []report.TraceSample{}}
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
	blocks := jsonFrameBlocks(s, "    ", true)
	// Every sample is written after a comma, but for the first of the report.
	wrote, err := writeParts(w, s, cfg, 1, func() partRenderer {
		e := newTraceEncoder(s, "    ", true)
		br := blocks.reader()
		return func(buf []byte, part report.TracePart) ([]byte, bool) {
			_ = s.EachIn(part, func(ts *report.TraceSample, set int32, positions []int32) error {
				buf = append(buf, ",\n    "...)
				buf = e.appendSample(buf, ts, set, positions, br, false)
				return nil
			})
			return buf, false
		}
	})
	if err != nil {
		return err
	}
	end := "]\n}\n"
	if wrote {
		end = "\n  ]\n}\n"
	}
	_, err = io.WriteString(w, end)
	return err
}

// jsonFrameBlocks prepares the JSON text of each location's frames in a sample's "frames"
// array: for each frame, a comma, the frame's line break and indentation (indented form),
// and the frame's object.
func jsonFrameBlocks(s *report.TraceStream, prefix string, indent bool) *locationBlocks {
	return newLocationBlocks(s, func() func([]byte, []report.Frame) []byte {
		e := newTraceEncoder(s, prefix, indent)
		return func(b []byte, frames []report.Frame) []byte {
			for i := range frames {
				b = append(b, ',')
				b = e.newline(b, 2)
				b = e.appendFrame(b, &frames[i])
			}
			return b
		}
	})
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

// traceEncoder writes TraceSamples as encoding/json would, much faster: the frames of each
// location are encoded once (locationBlocks) and copied into every sample that holds them,
// the labels of each label set are encoded once, and the rest is written by hand.
type traceEncoder struct {
	prefix string // the indentation of the sample's opening brace
	indent bool
	colon  string
	keys   []string
	sets   *labelSetCache

	scratch bytes.Buffer // where frames are encoded
	enc     *json.Encoder
}

func newTraceEncoder(s *report.TraceStream, prefix string, indent bool) *traceEncoder {
	e := &traceEncoder{prefix: prefix, indent: indent, colon: ":", sets: newLabelSetCache(s)}
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

// appendSample appends ts, of label set set, as a JSON object, its frames those of the
// locations at positions, whose text is in blocks; record adds the ndjson "kind" member
// first.
func (e *traceEncoder) appendSample(b []byte, ts *report.TraceSample, set int32, positions []int32, blocks *blockReader, record bool) []byte {
	b = append(b, '{')
	first := true
	if record {
		b = e.key(b, "kind", 1, true)
		b = appendTraceString(b, report.KindTraceSample)
		first = false
	}
	b = e.key(b, "value", 1, first)
	b = strconv.AppendInt(b, ts.Value, 10)

	b, _ = e.sets.append(b, set, func(b []byte) []byte {
		b = e.key(b, "labels", 1, false)
		b = appendLabelMap(e, b, ts.Labels, appendTraceString)
		b = e.key(b, "num_labels", 1, false)
		return appendLabelMap(e, b, ts.NumLabels, func(b []byte, v report.NumLabel) []byte {
			b = append(b, '{')
			b = e.key(b, "value", 4, true)
			b = strconv.AppendInt(b, v.Value, 10)
			b = e.key(b, "unit", 4, false)
			b = appendTraceString(b, v.Unit)
			b = e.newline(b, 3)
			return append(b, '}')
		})
	})

	b = e.key(b, "frames", 1, false)
	frames := false
	for _, pos := range positions {
		if pos >= 0 {
			frames = true
			break
		}
	}
	if !frames {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		first := true
		for _, pos := range positions {
			block := blocks.block(pos).text
			if first && len(block) > 0 {
				block = block[1:] // no comma before the first frame
				first = false
			}
			b = append(b, block...)
		}
		b = append(e.newline(b, 1), ']')
	}
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

// appendFrame appends f's encoding at depth 2 below the sample's brace.
func (e *traceEncoder) appendFrame(b []byte, f *report.Frame) []byte {
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
	return append(b, bytes.TrimSuffix(e.scratch.Bytes(), []byte("\n"))...)
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
// values (--jq): they skip encoding every record as text and parsing it back. The values are
// made from the report's structs (jsonValue), so they follow the schema their tags give. Each
// frame's value is made once and shared by every record that holds the frame, so emit must
// not modify the values it is given. emit's first error stops the walk and is returned.
func TraceRecords(s *report.TraceStream, emit func(any) error) error {
	header, err := decodeTraceValue(s.Header())
	if err != nil {
		return err
	}
	if err := emit(header); err != nil {
		return err
	}
	frames := make([]any, s.FrameCount())
	frame := func(f *report.Frame) any {
		if f.ID >= 0 && frames[f.ID] != nil {
			return frames[f.ID]
		}
		v := jsonValue(reflect.ValueOf(f).Elem())
		if f.ID >= 0 {
			frames[f.ID] = v
		}
		return v
	}
	return s.Each(func(ts *report.TraceSample) error {
		// The frames are made once each, and the record around them from the struct.
		rec := report.TraceRecord{Kind: report.KindTraceSample, TraceSample: *ts}
		rec.Frames = nil
		m := jsonValue(reflect.ValueOf(rec)).(map[string]any)
		stack := make([]any, len(ts.Frames))
		for i := range ts.Frames {
			stack[i] = frame(&ts.Frames[i])
		}
		m[framesKey] = stack
		return emit(m)
	})
}

// framesKey is the JSON name of TraceSample.Frames.
var framesKey = func() string {
	f, _ := reflect.TypeFor[report.TraceSample]().FieldByName("Frames")
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}()

// jsonValue is v as encoding/json encodes it, decoded again with UseNumber, made straight
// from v: structs by their json tags (omitempty, "-", embedded structs), maps by their
// string keys, integers as json.Number. A type that encodes itself goes through its encoding.
func jsonValue(v reflect.Value) any {
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface && v.Type().Implements(jsonMarshaler) {
		out, err := decodeTraceValue(v.Interface())
		if err != nil {
			return nil
		}
		return out
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return jsonValue(v.Elem())
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return jsonInt(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return json.Number(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b, _ := json.Marshal(v.Interface())
		return json.Number(b)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonValue(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			out[it.Key().String()] = jsonValue(it.Value())
		}
		return out
	case reflect.Struct:
		out := map[string]any{}
		addFields(out, v)
		return out
	}
	return nil
}

// addFields adds the members encoding/json writes for struct v to out.
func addFields(out map[string]any, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			addFields(out, fv)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue
		}
		out[name] = jsonValue(fv)
	}
}

// jsonMarshaler is the type of the values that encode themselves.
var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

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

// appendSorted sorts lines and appends them to buf.
func appendSorted(buf []byte, lines []string) []byte {
	slices.Sort(lines)
	for _, l := range lines {
		buf = append(buf, l...)
	}
	return buf
}

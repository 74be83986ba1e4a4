package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/profq/profq/internal/filter"
	"github.com/profq/profq/internal/stacks"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"

	"github.com/profq/profq/internal/report"
	"github.com/profq/profq/internal/testkit/proftest"
)

// tracesProfile is a small CPU profile with what traces must print faithfully: inlined
// frames, an address-only frame, duplicate stacks, a zero-valued sample, an empty stack,
// string and numeric labels, and names that need escaping in JSON (quotes, <>&, non-ASCII,
// U+2028) or that would break folded lines (';' and a line break).
func tracesProfile(t *testing.T) *profile.Profile {
	t.Helper()
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, `
runtime.main;main.main;main.outer+main.inner 3 30000000
runtime.main;main.main;main.render 1 10000000
runtime.main;main.main;0x4000 2 20000000
runtime.main;main.main;main.render 1 1500000
runtime.main;main.main;main.idle 0 0
1 10000000
runtime.main;main.main;main.weird 1 7000000
`)
	for _, f := range p.Function {
		if f.Name == "main.weird" {
			f.Name = "main.(*T[go;shape\nint]).<λ>&\"q\"\u2028"
		}
	}
	p.Sample[0].Label = map[string][]string{"handler": {"search"}, "tenant": {"acme", "beta"}}
	p.Sample[1].Label = map[string][]string{"handler": {"<home> & \"more\""}}
	p.Sample[1].NumLabel = map[string][]int64{"bytes": {4 << 20}, "request": {100, 200}}
	p.Sample[1].NumUnit = map[string][]string{"bytes": {"bytes"}, "request": {"", ""}}
	p.Sample[2].Label = map[string][]string{"pprof::base": {"true"}}
	p.Mapping[0].BuildID = "abc123"
	p.Comments = []string{"a comment", "#hidden"}
	p.TimeNanos = 1_700_000_000_000_000_000
	p.DurationNanos = 3_000_000_000
	return p
}

func tracesStream(t *testing.T) *report.TraceStream {
	t.Helper()
	inputs := []report.Input{{Source: "cpu.pb.gz", Role: report.RoleProfile, Format: report.FormatPprof,
		SampleTypes: []report.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, Samples: 7}}
	q := tracesProfile(t)
	s, err := report.NewTraces(q, stacks.FromProfile(q), inputs, report.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func renderTraces(t *testing.T, s *report.TraceStream, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Traces(&buf, s, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestTracesGolden(t *testing.T) {
	for _, format := range FormatNames(report.KindTraces) {
		t.Run(format, func(t *testing.T) {
			checkGolden(t, "traces.small."+format+".golden", renderTraces(t, tracesStream(t), Options{Format: Format(format)}))
		})
	}
	t.Run("table unit ms", func(t *testing.T) {
		checkGolden(t, "traces.small.unit-ms.table.golden", renderTraces(t, tracesStream(t), Options{Format: "table", Unit: "ms"}))
	})
}

// The JSON document is written sample by sample; it must be exactly what encoding/json
// writes for the whole report.Traces, the schema's definition.
func TestTracesJSONIsTheModelsEncoding(t *testing.T) {
	s := tracesStream(t)
	doc := s.Collect()
	var want bytes.Buffer
	if err := writeJSON(&want, doc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), string(renderTraces(t, s, Options{Format: "json"}))); diff != "" {
		t.Errorf("streamed JSON differs from encoding/json (-want +got):\n%s", diff)
	}

	// An empty report: "samples": [].
	p := proftest.MustFolded([]string{"samples/count", "cpu/nanoseconds"}, "main 1 1\n")
	empty, err := report.NewTraces(p, stacks.FromProfile(p), nil, report.Config{Granularity: "functions", Sort: "flat", Options: filter.Options{Focus: "^nothing$"}})
	if err != nil {
		t.Fatal(err)
	}
	got := renderTraces(t, empty, Options{Format: "json"})
	var v struct{ Samples []any }
	if err := json.Unmarshal(got, &v); err != nil || v.Samples == nil || len(v.Samples) != 0 {
		t.Errorf("empty report: %v, samples %v in\n%s", err, v.Samples, got)
	}
	if !bytes.HasSuffix(got, []byte("\"samples\": []\n}\n")) {
		t.Errorf("empty report does not end with an empty samples list:\n%s", got)
	}
}

// Each ndjson line is the compact encoding of the header, then of one TraceRecord.
func TestTracesNDJSONLinesAreTheModelsEncoding(t *testing.T) {
	s := tracesStream(t)
	doc := s.Collect()
	var want []string
	line, err := json.Marshal(doc.TracesHeader)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, string(line))
	for _, ts := range doc.Samples {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(report.TraceRecord{Kind: report.KindTraceSample, TraceSample: ts}); err != nil {
			t.Fatal(err)
		}
		want = append(want, strings.TrimSuffix(b.String(), "\n"))
	}
	got := strings.Split(strings.TrimSuffix(string(renderTraces(t, s, Options{Format: "ndjson"})), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ndjson differs from encoding/json (-want +got):\n%s", diff)
	}
	if len(got) != 1+doc.SampleCount || doc.SampleCount != 6 {
		t.Errorf("%d lines for %d samples, want a header and 6 samples", len(got), doc.SampleCount)
	}
}

func TestTracesFolded(t *testing.T) {
	got := string(renderTraces(t, tracesStream(t), Options{Format: "folded"}))
	want := strings.Join([]string{
		"runtime.main;main.main;main.outer;main.inner 30000000",
		"runtime.main;main.main;main.render 10000000",
		"runtime.main;main.main;[app] 20000000",
		"runtime.main;main.main;main.render 1500000",
		// main.idle (zero) is left out; ';' and the line break cannot split the name.
		"runtime.main;main.main;main.(*T[go:shape int]).<λ>&\"q\"\u2028 7000000",
	}, "\n") + "\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

// failingWriter fails every write and counts the attempts.
type failingWriter struct{ writes int }

var errClosed = errors.New("closed")

func (w *failingWriter) Write([]byte) (int, error) {
	w.writes++
	return 0, errClosed
}

// A renderer stops at the first failed write: profq ... | head stops at once.
func TestTracesStopAtFirstWriteError(t *testing.T) {
	for _, format := range FormatNames(report.KindTraces) {
		t.Run(format, func(t *testing.T) {
			w := &failingWriter{}
			err := Traces(w, tracesStream(t), Options{Format: Format(format)})
			if !errors.Is(err, errClosed) || w.writes != 1 {
				t.Errorf("error %v after %d writes, want errClosed after 1", err, w.writes)
			}
		})
	}
}

// TraceRecords hands out exactly what decoding each ndjson line gives, so that --jq sees the
// same values whichever way the records reach it.
func TestTraceRecordsAreTheDecodedNDJSON(t *testing.T) {
	var want []any
	for _, line := range strings.Split(strings.TrimSuffix(string(renderTraces(t, tracesStream(t), Options{Format: "ndjson"})), "\n"), "\n") {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
	}
	var got []any
	if err := TraceRecords(tracesStream(t), func(v any) error { got = append(got, v); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records differ from the decoded ndjson (-want +got):\n%s", diff)
	}
	stop := errors.New("stop")
	calls := 0
	if err := TraceRecords(tracesStream(t), func(any) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("error %v after %d records, want stop after 1", err, calls)
	}
}

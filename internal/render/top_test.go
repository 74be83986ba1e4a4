package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/profq/profq/internal/report"
)

const (
	ns  = int64(1)
	us  = 1000 * ns
	ms  = 1000 * us
	sec = 1000 * ms
	hr  = 3600 * sec
)

// spec is one row of a hand-built report: name, flat, cum and the inline label.
type spec struct {
	name      string
	flat, cum int64
	inline    string
}

func pct(v, total int64) *float64 {
	if total == 0 {
		return nil
	}
	p := 100 * float64(v) / float64(total)
	return &p
}

// newTop builds a top report the way report.NewTop fills one in: percentages of total,
// a signed running sum, Shown as the sum of the rows' flat values, every row a candidate.
func newTop(typ, unit string, total int64, rows ...spec) *report.Top {
	t := &report.Top{
		SchemaVersion: report.SchemaVersion,
		Kind:          report.KindTop,
		SampleType:    report.SampleType{Type: typ, Unit: unit},
		Total:         total,
		Options: report.EffectiveOptions{
			SampleIndex:  1,
			Granularity:  "functions",
			NodeFraction: 0.005,
			EdgeFraction: 0.001,
			Sort:         "flat",
			Filters:      []report.Filter{},
		},
		Profile:  report.ProfileInfo{Comments: []string{}},
		Inputs:   []report.Input{},
		Warnings: []string{},
		Rows:     []report.Row{},
	}
	var sum int64
	for _, s := range rows {
		sum += s.flat
		t.Rows = append(t.Rows, report.Row{
			Name:         s.name,
			Flat:         s.flat,
			FlatPct:      pct(s.flat, total),
			SumPct:       pct(sum, total),
			Cum:          s.cum,
			CumPct:       pct(s.cum, total),
			Inline:       s.inline,
			NodeIdentity: report.NodeIdentity{Function: s.name},
		})
	}
	t.Shown = sum
	t.ShownPct = pct(sum, total)
	t.CandidateNodes = len(rows)
	return t
}

// sampleCPU is `pprof -top` of pprof's internal/report/testdata/sample.cpu, whose table
// prints in seconds: the smallest flat is 10ms and 100*10ms < 1.76s.
func sampleCPU() *report.Top {
	t := newTop("cpu", "nanoseconds", 1760*ms,
		spec{"runtime.mapiternext", 1280 * ms, 1370 * ms, ""},
		spec{"main.busyLoop", 150 * ms, 1760 * ms, ""},
		spec{"math.Abs", 110 * ms, 110 * ms, report.InlineFull},
		spec{"runtime.evacuate", 60 * ms, 70 * ms, ""},
		spec{"runtime.add", 40 * ms, 40 * ms, report.InlineFull},
		spec{"runtime.mapassign_fast64", 40 * ms, 130 * ms, ""},
		spec{"runtime.(*bmap).overflow", 30 * ms, 40 * ms, report.InlineFull},
		spec{"runtime.(*hmap).growing", 20 * ms, 20 * ms, report.InlineFull},
		spec{"runtime.memmove", 20 * ms, 20 * ms, ""},
		spec{"runtime.tooManyOverflowBuckets", 10 * ms, 10 * ms, report.InlineFull},
		spec{"main.main", 0, 1760 * ms, ""},
		spec{"runtime.growWork", 0, 70 * ms, ""},
		spec{"runtime.main", 0, 1760 * ms, ""},
		spec{"runtime.typedmemmove", 0, 20 * ms, ""},
	)
	t.Profile = report.ProfileInfo{
		Comments:      []string{},
		File:          "sample.bin",
		TimeNanos:     1506718679257235370, // 2017-09-29 20:57:59.25723537 UTC
		DurationNanos: 2002012950,
	}
	t.Inputs = []report.Input{{
		Source:      "sample.cpu",
		Role:        report.RoleProfile,
		Format:      report.FormatPprof,
		SampleTypes: []report.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Samples:     76,
	}}
	return t
}

// sampleCPUTop5 is `pprof -top -nodecount=5` of the same profile: now the smallest flat is
// 40ms, 100*40ms is not below 1.76s, so the table prints in milliseconds.
func sampleCPUTop5() *report.Top {
	t := sampleCPU()
	t.Options.NodeCount = 5
	t.Rows = t.Rows[:5]
	t.Shown = 1640 * ms
	t.ShownPct = pct(t.Shown, t.Total)
	return t
}

// sampleCount is `pprof -top -sample_index=0 -focus=map` of sample.cpu: a count unit prints
// bare integers and the focus filter is listed.
func sampleCount() *report.Top {
	t := newTop("samples", "count", 176,
		spec{"runtime.mapiternext", 128, 137, ""},
		spec{"runtime.evacuate", 6, 7, ""},
		spec{"runtime.add", 4, 4, report.InlineFull},
		spec{"runtime.mapassign_fast64", 4, 13, ""},
		spec{"runtime.(*bmap).overflow", 3, 4, report.InlineFull},
		spec{"runtime.(*hmap).growing", 2, 2, report.InlineFull},
		spec{"runtime.memmove", 2, 2, ""},
		spec{"runtime.tooManyOverflowBuckets", 1, 1, report.InlineFull},
		spec{"main.busyLoop", 0, 150, ""},
		spec{"main.main", 0, 150, ""},
		spec{"runtime.growWork", 0, 7, ""},
		spec{"runtime.main", 0, 150, ""},
		spec{"runtime.typedmemmove", 0, 2, ""},
	)
	t.Options.SampleIndex = 0
	t.Options.Filters = []report.Filter{{Name: "focus", Value: "map"}}
	t.Profile = sampleCPU().Profile
	return t
}

// timeUnits has values from 1ns to 3 hours (pprof -top -nodefraction=0).
func timeUnits() *report.Top {
	t := newTop("cpu", "nanoseconds", 3*hr+2500*us+1500*ns+1,
		spec{"main.fd", 3 * hr, 3 * hr, ""},
		spec{"main.fc", 2500 * us, 2500 * us, ""},
		spec{"main.fb", 1500 * ns, 1500 * ns, ""},
		spec{"main.fa", 1 * ns, 1 * ns, ""},
		spec{"main.main", 0, 3*hr + 2500*us + 1500*ns + 1, ""},
	)
	t.Options.NodeFraction = 0
	t.Profile = report.ProfileInfo{File: "app", BuildID: "abc123", TimeNanos: 1700000000123456789, Comments: []string{}}
	return t
}

// timeTrimmed is the same profile with pprof's default nodefraction: three nodes dropped, and
// the Dropped line prints total*nodefraction in the report's unit (0.02hrs).
func timeTrimmed() *report.Top {
	t := timeUnits()
	t.Options.NodeFraction = 0.005
	t.Rows = []report.Row{t.Rows[0], t.Rows[4]}
	t.Rows[1].SumPct = t.Rows[0].SumPct
	t.NodeCutoff = 54000012507
	t.DroppedNodes = 3
	t.CandidateNodes = 2
	return t
}

// memUnits has 5GiB, 1.5KiB and 1023 bytes (pprof -top -nodefraction=0).
func memUnits() *report.Top {
	total := int64(5<<30 + 1536 + 1023)
	t := newTop("alloc_space", "bytes", total,
		spec{"main.big", 5 << 30, 5 << 30, ""},
		spec{"main.mid", 1536, 1536, ""},
		spec{"main.small", 1023, 1023, ""},
		spec{"main.main", 0, total, ""},
	)
	t.Options.NodeFraction = 0
	t.Options.SampleIndex = 0
	t.Profile = report.ProfileInfo{File: "app", BuildID: "abc123", TimeNanos: 1700000000123456789, Comments: []string{}}
	return t
}

// widgets has a unit pprof does not know: it is glued to the numbers and the Duration line has
// no ratio.
func widgets() *report.Top {
	t := newTop("things", "widgets", 1234572, spec{"main.w", 1234567, 1234567, ""})
	t.Options.SampleIndex = 0
	t.NodeCutoff = 6172
	t.DroppedNodes = 1
	t.Profile = report.ProfileInfo{File: "app", BuildID: "abc123", TimeNanos: 1700000000123456789, DurationNanos: 5 * sec, Comments: []string{}}
	return t
}

// diff is `pprof -top -diff_base=base new`: negative values print signed, percentages absolute,
// and sum% follows the signed running sum.
func diff() *report.Top {
	t := newTop("cpu", "nanoseconds", 150*ms,
		spec{"main.X", -60 * ms, -60 * ms, ""},
		spec{"main.Y", 30 * ms, 30 * ms, ""},
		spec{"main.Z", 30 * ms, 30 * ms, ""},
	)
	t.Profile = report.ProfileInfo{File: "app", BuildID: "abc123", TimeNanos: 1700000000123456789, DurationNanos: 2 * sec, Comments: []string{}}
	t.Inputs = []report.Input{
		{Source: "new.pb.gz", Role: report.RoleProfile, Format: report.FormatPprof, SampleTypes: []report.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, Samples: 3},
		{Source: "base.pb.gz", Role: report.RoleDiffBase, Format: report.FormatPprof, SampleTypes: []report.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, Samples: 2},
	}
	return t
}

// names holds characters that markdown tables and CSV must escape or quote.
func names() *report.Top {
	t := newTop("cpu", "nanoseconds", 60*ms,
		spec{"main.a|b", 30 * ms, 30 * ms, ""},
		spec{`main.c,d "q"`, 20 * ms, 20 * ms, report.InlinePartial},
		spec{"main.`tick`*x*", 10 * ms, 10 * ms, report.InlineFull},
		spec{"main.main", 0, 60 * ms, ""},
	)
	t.Options.Granularity = "lines"
	t.Rows[0].File, t.Rows[0].Line, t.Rows[0].Column = "/src/a,b.go", 12, 3
	t.Rows[1].Address, t.Rows[1].Object = "0x4a5f10", "app"
	t.Profile = report.ProfileInfo{File: "app", TimeNanos: 1700000000123456789, DurationNanos: sec, Comments: []string{}}
	return t
}

// filtered has every filter, given out of pprof's order, one too long to print in full and
// prune_from, which pprof does not list; profile comments; a mean type.
func filtered() *report.Top {
	t := newTop("mean_delay", "nanoseconds", 250*ms,
		spec{"sync.(*Mutex).Lock", 200 * ms, 200 * ms, ""},
		spec{"main.worker", 50 * ms, 250 * ms, ""},
	)
	t.Options.Mean = true
	t.Options.Filters = []report.Filter{
		{Name: "tagignore", Value: "user=bot"},
		{Name: "prune_from", Value: "runtime\\..*"},
		{Name: "show_from", Value: "main\\.worker"},
		{Name: "focus", Value: "main\\.(" + strings.Repeat("handler|", 12) + "x)"},
		{Name: "tagfocus", Value: "bytes=1kb:"},
		{Name: "show", Value: "sync"},
		{Name: "hide", Value: "runtime"},
		{Name: "ignore", Value: "testing"},
	}
	t.Profile = report.ProfileInfo{
		BuildID:       "0123456789abcdef",
		Comments:      []string{"first comment", "second comment"},
		TimeNanos:     1700000000123456789,
		DurationNanos: 10 * sec,
	}
	t.Warnings = []string{"ignore expression matched no samples"}
	return t
}

// zeroTotal has rows but a zero total: percentages are 0% (null in JSON) and neither the
// Dropped nor the Showing top line is printed.
func zeroTotal() *report.Top {
	t := newTop("delay", "nanoseconds", 0,
		spec{"main.a", 10, 10, ""},
		spec{"main.b", -10, 0, ""},
		spec{"main.main", 0, 10, ""},
	)
	t.DroppedNodes = 2
	t.CandidateNodes = 5
	t.Profile = report.ProfileInfo{DurationNanos: sec, Comments: []string{}}
	return t
}

// noMatch is a focus that matched nothing: no rows, a non-zero total.
func noMatch() *report.Top {
	t := newTop("cpu", "nanoseconds", 50*ms)
	t.Options.Filters = []report.Filter{{Name: "focus", Value: "nomatch"}}
	t.Warnings = []string{"focus expression matched no samples"}
	t.Profile = report.ProfileInfo{File: "app", TimeNanos: 1700000000123456789, DurationNanos: sec, Comments: []string{}}
	return t
}

// empty is a report with nothing in it and every list nil.
func empty() *report.Top {
	return newTop("cpu", "nanoseconds", 0)
}

func TestTopGolden(t *testing.T) {
	all := []string{"table", "json", "csv", "markdown"}
	tests := []struct {
		name    string
		top     func() *report.Top
		formats []string
		unit    string
	}{
		{"cpu", sampleCPU, all, ""},
		{"cpu.nodecount5", sampleCPUTop5, []string{"table", "markdown"}, ""},
		{"count", sampleCount, []string{"table"}, ""},
		{"time", timeUnits, []string{"table"}, ""},
		{"time.unit-auto", timeUnits, []string{"table", "markdown"}, "auto"},
		{"time.unit-s", timeUnits, []string{"table"}, "s"},
		{"time.trimmed", timeTrimmed, []string{"table"}, ""},
		{"mem", memUnits, []string{"table"}, ""},
		{"mem.unit-mb", memUnits, []string{"table"}, "mb"},
		{"widgets", widgets, []string{"table", "markdown"}, ""},
		{"diff", diff, all, ""},
		{"names", names, all, ""},
		{"filtered", filtered, []string{"table", "json"}, ""},
		{"zerototal", zeroTotal, all, ""},
		{"nomatch", noMatch, []string{"table", "json"}, ""},
		{"empty", empty, all, ""},
	}
	for _, tt := range tests {
		for _, f := range tt.formats {
			name := "top." + tt.name + "." + f + ".golden"
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				if err := Top(&buf, tt.top(), Options{Format: Format(f), Unit: tt.unit}); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, name, buf.Bytes())
			})
		}
	}
}

// TestTopTableMatchesPprof holds the table format to pprof's own output for the same values,
// byte for byte, where no value is wider than pprof's columns.
func TestTopTableMatchesPprof(t *testing.T) {
	const cpuTop5 = `File: sample.bin
Type: cpu
Time: 2017-09-29 20:57:59 UTC
Duration: 2s, Total samples = 1760ms (87.91%)
Showing nodes accounting for 1640ms, 93.18% of 1760ms total
Showing top 5 nodes out of 14
      flat  flat%   sum%        cum   cum%
    1280ms 72.73% 72.73%     1370ms 77.84%  runtime.mapiternext
     150ms  8.52% 81.25%     1760ms   100%  main.busyLoop
     110ms  6.25% 87.50%      110ms  6.25%  math.Abs (inline)
      60ms  3.41% 90.91%       70ms  3.98%  runtime.evacuate
      40ms  2.27% 93.18%       40ms  2.27%  runtime.add (inline)
`
	const diffTop = `File: app
Build ID: abc123
Type: cpu
Time: 2023-11-14 22:13:20 UTC
Duration: 2s, Total samples = 150ms ( 7.50%)
Showing nodes accounting for 0, 0% of 150ms total
      flat  flat%   sum%        cum   cum%
     -60ms 40.00% 40.00%      -60ms 40.00%  main.X
      30ms 20.00% 20.00%       30ms 20.00%  main.Y
      30ms 20.00%     0%       30ms 20.00%  main.Z
`
	for _, tt := range []struct {
		name string
		top  *report.Top
		want string
	}{
		{"cpu.nodecount5", sampleCPUTop5(), cpuTop5},
		{"diff", diff(), diffTop},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Top(&buf, tt.top, Options{}); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, buf.String()); d != "" {
				t.Errorf("table differs from pprof -top (-pprof +profq):\n%s", d)
			}
		})
	}
}

func TestTopTableTimeIsUTC(t *testing.T) {
	saved := time.Local
	time.Local = time.FixedZone("EST", -5*3600)
	defer func() { time.Local = saved }()

	var buf bytes.Buffer
	if err := Top(&buf, sampleCPU(), Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\nTime: 2017-09-29 20:57:59 UTC\n") {
		t.Errorf("Time line is not in UTC:\n%s", buf.String())
	}
}

func TestTopJSONKeyOrder(t *testing.T) {
	var buf bytes.Buffer
	if err := Top(&buf, sampleCPU(), Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	var keys []string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("document does not start with an object: %v, %v", tok, err)
	}
	for len(keys) < 2 {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if len(keys) == 1 && v != float64(1) {
			t.Errorf("schema_version = %v, want 1", v)
		}
		if len(keys) == 2 && v != "top" {
			t.Errorf("kind = %v, want top", v)
		}
	}
	if d := cmp.Diff([]string{"schema_version", "kind"}, keys); d != "" {
		t.Errorf("first keys (-want +got):\n%s", d)
	}
}

// TestTopJSONNulls checks that a percentage of a zero total is null, and that nothing else
// is: the lists of a report are [] (report's TestJSONContract), rendering only encodes them.
func TestTopJSONNulls(t *testing.T) {
	top := zeroTotal()
	var buf bytes.Buffer
	if err := Top(&buf, top, Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ShownPct *float64         `json:"shown_pct"`
		Rows     []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ShownPct != nil {
		t.Errorf("shown_pct = %v, want null", *doc.ShownPct)
	}
	for _, r := range doc.Rows {
		for _, k := range []string{"flat_pct", "sum_pct", "cum_pct"} {
			if v, ok := r[k]; !ok || v != nil {
				t.Errorf("row %v: %s = %v, want null", r["name"], k, v)
			}
		}
	}
	if strings.Count(buf.String(), ": null") != 1+3*len(doc.Rows) {
		t.Errorf("unexpected nulls:\n%s", buf.String())
	}
}

func TestTopJSONEscaping(t *testing.T) {
	top := empty()
	top.Warnings = []string{"<a> & <b>"}
	var buf bytes.Buffer
	if err := Top(&buf, top, Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"<a> & <b>"`) {
		t.Errorf("HTML characters were escaped:\n%s", buf.String())
	}
	if !strings.HasSuffix(buf.String(), "}\n") {
		t.Errorf("no trailing newline")
	}
}

func TestTopUnknownFormat(t *testing.T) {
	var buf bytes.Buffer
	err := Top(&buf, empty(), Options{Format: "xml"})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Format != "xml" {
		t.Errorf("Top(xml) = %v, want an unknown format error", err)
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q on error", buf.String())
	}
}

func TestTopFormats(t *testing.T) {
	f := FormatNames(report.KindTop)
	for _, name := range f {
		var buf bytes.Buffer
		if err := Top(&buf, sampleCPU(), Options{Format: Format(name)}); err != nil {
			t.Errorf("format %s: %v", name, err)
		}
	}
	f[0] = "changed"
	if FormatNames(report.KindTop)[0] != "table" {
		t.Errorf("TopFormats shares its slice")
	}
}

func TestMdCode(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"main.f", "`main.f`"},
		{"a|b", "`a\\|b`"},
		{"a`b", "``a`b``"},
		{"`x`", "`` `x` ``"},
		{"a``b`", "``` a``b` ```"},
		{" x ", "`  x  `"},
		{"", ""},
	} {
		if got := mdCode(tt.in); got != tt.want {
			t.Errorf("mdCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTopTableControlCharacters(t *testing.T) {
	top := newTop("cpu", "nanoseconds", 10*ms, spec{"main.a\tb\nc\r", 10 * ms, 10 * ms, ""})
	var buf bytes.Buffer
	if err := Top(&buf, top, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if got, want := lines[len(lines)-2], "      10ms   100%   100%       10ms   100%  main.a b c"; got != want {
		t.Errorf("row = %q, want %q", got, want)
	}
}

func BenchmarkTopTable(b *testing.B) {
	var rows []spec
	for i := range 10000 {
		rows = append(rows, spec{fmt.Sprintf("main.f%05d", i), int64(10000-i) * ms, int64(10000-i) * ms, ""})
	}
	top := newTop("cpu", "nanoseconds", 50005000*ms, rows...)
	for b.Loop() {
		if err := Top(io.Discard, top, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A name longer than maxCellBytes is shortened in a table and in markdown, at a character,
// with a marker of how much was left out; the other rows are not padded to it; JSON and CSV
// keep it whole.
func TestLongNamesShortened(t *testing.T) {
	long := strings.Repeat("é", maxCellBytes) // 2 bytes each: the cut falls inside one
	top := &report.Top{SchemaVersion: report.SchemaVersion, Kind: report.KindTop, Total: 3,
		SampleType: report.SampleType{Type: "samples", Unit: "count"},
		Rows:       []report.Row{{Name: long, Flat: 2, Cum: 2}, {Name: "short", Flat: 1, Cum: 1}}}
	want := strings.Repeat("é", maxCellBytes/2) + fmt.Sprintf("…(%d more bytes)", maxCellBytes)
	for _, f := range []Format{Table, Markdown} {
		var b bytes.Buffer
		if err := Top(&b, top, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, want) || strings.Contains(out, long) || !utf8.ValidString(out) {
			t.Errorf("%s: the name is not shortened to %d bytes and a marker", f, maxCellBytes)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, "short") && len(line) > 100 {
				t.Errorf("%s: a short name's line is %d bytes long", f, len(line))
			}
		}
	}
	for _, f := range []Format{JSON, CSV} {
		var b bytes.Buffer
		if err := Top(&b, top, Options{Format: f}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), long) {
			t.Errorf("%s: the name is not whole", f)
		}
	}
}

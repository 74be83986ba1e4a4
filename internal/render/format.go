package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/profq/profq/internal/report"
)

// Format is a form a report is written in.
type Format string

// The formats, in the order help texts list them.
const (
	Table    Format = "table"    // aligned text for a terminal, as pprof prints it
	DOT      Format = "dot"      // Graphviz
	HTML     Format = "html"     // a self-contained page
	SVG      Format = "svg"      // an image
	JSON     Format = "json"     // one document: the machine contract (docs/json.md)
	NDJSON   Format = "ndjson"   // one JSON document a line
	CSV      Format = "csv"      // RFC 4180 rows of raw values
	Markdown Format = "markdown" // a heading and GitHub-flavoured tables
	Folded   Format = "folded"   // folded stacks: one line a stack
	JUnit    Format = "junit"    // JUnit XML, as CI systems show test results
)

// order is the order of the formats in help texts and errors.
var order = []Format{Table, DOT, HTML, SVG, JSON, NDJSON, CSV, Markdown, Folded, JUnit}

// Terminal says whether output in f is text for people to read in a terminal, which
// SafeText should filter: tables, markdown and DOT. Data formats (JSON, CSV, folded stacks,
// profiles) keep every byte; JSON escapes control characters itself.
func (f Format) Terminal() bool {
	return f == Table || f == Markdown || f == DOT
}

// Options are how a report is written.
type Options struct {
	// Format is one of Formats(kind); "" means the kind's default, the first.
	Format Format
	// Unit is the unit of the formatted values of the human-readable formats (table,
	// markdown, DOT): "minimum" (the default, also for "") picks one unit for the whole
	// report as pprof does, "auto" scales each value on its own, anything else (ms, s, kB,
	// MB, ...) forces that unit. The data formats (JSON, CSV, ...) always carry raw values in
	// the sample unit. Reports pprof prints value by value (traces, tags) take "minimum" as
	// "auto".
	Unit string
	// Flame is how a flame graph is drawn; other reports ignore it.
	Flame FlameStyle
	// DivideBy divides every value the table and markdown forms of top, peek and list print,
	// as pprof's -divide_by does (multiplied by 1/DivideBy and truncated toward zero);
	// percentages, order and trimming do not change, nor do the data formats. 0 means 1.
	DivideBy float64
	// CompactLabels leaves the profile's lines (file, type, time, duration) out of the header
	// of the top, peek and tree tables, as pprof's -compact_labels does.
	CompactLabels bool
}

// writer writes one kind of report in one format.
type writer func(w io.Writer, report any, o Options) error

// as makes a writer of a function that writes reports of type R.
func as[R any](f func(w io.Writer, r R, o Options) error) writer {
	return func(w io.Writer, r any, o Options) error { return f(w, r.(R), o) }
}

// writers are which formats each kind of report is written in, and how: the one table the
// help texts, the checks of --format and the errors come from (Formats). The first format
// in order is each kind's default. Row-shaped reports have table, JSON, CSV and markdown;
// docs/json.md says why the others have what they have.
var writers = map[string]map[Format]writer{
	report.KindTop: {Table: as(topTable), JSON: as(encodeJSON[*report.Top]), CSV: as(topCSV), Markdown: as(topMarkdown)},
	report.KindTopByLabel: {Table: as(byLabelTable), JSON: as(encodeJSON[*report.TopByLabel]),
		CSV: as(byLabelCSV), Markdown: as(byLabelMarkdown)},
	report.KindDiff:   {Table: as(diffTable), JSON: as(encodeJSON[*report.Diff]), CSV: as(diffCSV), Markdown: as(diffMarkdown)},
	report.KindTags:   {Table: as(tagsTable), JSON: as(encodeJSON[*report.Tags]), CSV: as(tagsCSV), Markdown: as(tagsMarkdown)},
	report.KindPeek:   {Table: as(peekTable), JSON: as(encodeJSON[*report.Peek]), CSV: as(peekCSV), Markdown: as(peekMarkdown)},
	report.KindList:   {Table: as(listTable), JSON: as(encodeJSON[*report.List]), CSV: as(listCSV), Markdown: as(listMarkdown)},
	report.KindInfo:   {Table: as(infoTable), JSON: as(encodeJSON[*report.Info]), Markdown: as(infoMarkdown)},
	report.KindPGO:    {Table: as(pgoTable), JSON: as(encodeJSON[*report.PGO])},
	report.KindTraces: {Table: as(tracesTable), JSON: as(tracesJSON), NDJSON: as(tracesNDJSON), Folded: as(tracesFolded)},
	report.KindGraph:  {DOT: as(graphDOT), JSON: as(encodeJSON[*report.GraphReport])},
	report.KindFlame:  {HTML: as(flameHTML), SVG: as(flameSVG), JSON: as(encodeJSON[*report.Flame])},
	report.KindGoroutines: {Table: as(goroutinesTable), JSON: as(encodeJSON[*report.Goroutines]),
		CSV: as(goroutinesCSV), Markdown: as(goroutinesMarkdown)},
	report.KindTargets: {Table: as(targetsTable), JSON: as(encodeJSON[*report.Targets]), Markdown: as(targetsMarkdown)},
	report.KindBench: {Table: as(benchTable), JSON: as(encodeJSON[*report.Bench]), Markdown: as(benchMarkdown),
		JUnit: as(benchJUnit)},
}

// Formats are the formats a kind of report (report.KindTop, ...) is written in, its
// default first. Each call returns a new slice.
func Formats(kind string) []Format {
	var out []Format
	for _, f := range order {
		if writers[kind][f] != nil {
			out = append(out, f)
		}
	}
	return out
}

// FormatNames are Formats as strings, for flags and help texts.
func FormatNames(kind string) []string {
	var out []string
	for _, f := range Formats(kind) {
		out = append(out, string(f))
	}
	return out
}

// FormatError is a report asked for in a format it is not written in.
type FormatError struct {
	Kind   string
	Format Format
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("the %s report has no %s format (want one of %s)",
		strings.ReplaceAll(e.Kind, "_", " "), e.Format, strings.Join(FormatNames(e.Kind), ", "))
}

// Supports says whether kind is written in f.
func Supports(kind string, f Format) bool {
	return writers[kind][f] != nil
}

// write writes r, a report of the kind, in o.Format.
func write(w io.Writer, kind string, r any, o Options) error {
	if o.Format == "" {
		o.Format = Formats(kind)[0]
	}
	wr := writers[kind][o.Format]
	if wr == nil {
		return &FormatError{Kind: kind, Format: o.Format}
	}
	return wr(w, r, o)
}

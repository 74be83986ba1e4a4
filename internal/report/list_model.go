package report

// KindList is the kind of the list report.
const KindList = "list"

// List is the "list" report: for each function whose name matches a regular expression, its
// source lines with the flat and cumulative values of each, as pprof -list prints them.
type List struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "list".
	Kind string `json:"kind"`
	// Regexp is the expression the function names were matched against, as given.
	Regexp string `json:"regexp"`
	// SampleType is the type and unit of every value in the report.
	SampleType SampleType `json:"sample_type"`
	// Total is the denominator of the functions' percentages, as in a top report.
	Total int64 `json:"total"`
	// Options are the effective options: granularity is always "lines".
	Options EffectiveOptions `json:"options"`
	// Profile carries profile-level facts (binary, comments, time, duration).
	Profile ProfileInfo `json:"profile"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems: a filter that matched nothing, a source file that
	// was not found (its function is still reported, without lines), a source file whose
	// lines do not match a function's in the profile (it has likely changed since).
	Warnings []string `json:"warnings"`
	// Functions are the matched functions by name, each of its source files apart (by file
	// name).
	Functions []ListFunction `json:"functions"`
}

// ListFunction is one matched function in one source file.
type ListFunction struct {
	// Name is the function's name.
	Name string `json:"name"`
	// File is the source file as the profile names it; "" for a function without one
	// (Lines is then empty and Error says so).
	File string `json:"file"`
	// Path is where the file was read, "" when it was not found.
	Path string `json:"path"`
	// Flat and Cum add up the function's lines in this file; CumPct is 100*Cum/Total, or
	// null when Total is 0.
	Flat   int64    `json:"flat"`
	Cum    int64    `json:"cum"`
	CumPct *float64 `json:"cum_pct"`
	// StartLine and EndLine are the first and last lines listed: from the function's start
	// (or five lines before its first sampled line) to five lines after its last, as pprof
	// lists them; 0 when nothing was listed.
	StartLine int64 `json:"start_line"`
	EndLine   int64 `json:"end_line"`
	// Lines are the listed lines in order.
	Lines []ListLine `json:"lines"`
	// Error says why no lines are listed: the file was not found or not read, or the
	// profile names no file. "" otherwise.
	Error string `json:"error"`
}

// ListLine is one source line.
type ListLine struct {
	Line int64 `json:"line"`
	// Flat and Cum add up the nodes of the line (columns, inlined calls).
	Flat int64 `json:"flat"`
	Cum  int64 `json:"cum"`
	// Source is the line's text, without its line break.
	Source string `json:"source"`
}

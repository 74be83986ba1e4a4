// Package report builds profq's output model: plain data that is the JSON contract and that
// every renderer formats.
package report

import (
	"bytes"
	"cmp"
	"encoding/json"
)

// SchemaVersion is the version of the JSON documents profq writes. Adding a field keeps it;
// removing, renaming or changing the meaning or unit of a field bumps it.
const SchemaVersion = 1

// Kinds of report documents.
const (
	KindTop  = "top"
	KindDiff = "diff"
)

// SampleType names what a value measures and its unit, as the profile states them.
type SampleType struct {
	// Type is the sample type name, e.g. "cpu", "alloc_space". Under --mean it carries the
	// "mean_" prefix, as pprof's "Type:" header does.
	Type string `json:"type"`
	// Unit is the unit of every value in the report, e.g. "nanoseconds", "bytes", "count".
	Unit string `json:"unit"`
}

// Roles of an input.
const (
	RoleProfile  = "profile"   // top: a profile being reported
	RoleBase     = "base"      // top: a base subtracted from the profiles (--base); diff: a base capture
	RoleDiffBase = "diff_base" // top: a base the profiles are compared against (--diff-base)
	RoleNew      = "new"       // diff: a capture compared against the base
)

// Formats of an input.
const (
	FormatPprof  = "pprof"  // a pprof profile: profile.proto, gzipped or not, or a legacy format
	FormatOTLP   = "otlp"   // OpenTelemetry profiles: protobuf, collector streams, OTLP/JSON, JSON lines
	FormatFolded = "folded" // folded stacks: one "root;...;leaf value" line per stack
	// FormatSpeedscope is a speedscope JSON file (sampled and evented profiles).
	FormatSpeedscope = "speedscope"
	// FormatV8 is a V8 CPU profile (.cpuprofile, legacy head tree) or a Chrome trace of one.
	FormatV8 = "v8"
	// FormatTraceEvent is Chrome's Trace Event Format (chrome://tracing, Perfetto's JSON
	// export): the time spent in its duration events.
	FormatTraceEvent = "trace-event"
	// FormatPerf is the text output of Linux `perf script`.
	FormatPerf = "perf"
	// FormatJFR is a Java Flight Recorder recording (the JDK's, async-profiler's).
	FormatJFR = "jfr"
	// FormatCallgrind is the output of Valgrind's callgrind tool (or its cachegrind tool).
	FormatCallgrind = "callgrind"
	FormatTopJSON   = "top-json" // a saved profq top JSON document (diff only)
)

// Input describes one profile that went into a report.
type Input struct {
	// Source is the argument as given: a path, or "-" for standard input.
	Source string `json:"source"`
	// Role is "profile", or "base" / "diff_base" for a base profile; in a diff, "base" or "new".
	Role string `json:"role"`
	// Format is what the input was read as: "pprof", "otlp", "folded", or "top-json" for a
	// saved top report.
	Format string `json:"format"`
	// SampleTypes lists the input's sample types before profiles were merged.
	SampleTypes []SampleType `json:"sample_types"`
	// Samples is the number of samples the input holds.
	Samples int `json:"samples"`
	// Warnings are what reading the input noticed and passed over, such as malformed lines of
	// a text format; [] when there is nothing to say.
	Warnings []string `json:"warnings"`
	// FrameTypes are the frame types the input states, by mapping file; reports show them on
	// their nodes (Row.FrameType) rather than here.
	FrameTypes map[string]string `json:"-"`
	// SelfCostsOnly is true when the input states each function's own cost but not who
	// called it (callgrind's output of a Go program, or without call chains): its cum values
	// are its flat values and its callers are unknown.
	SelfCostsOnly bool `json:"self_costs_only"`
}

// ProfileInfo carries the profile-level facts that pprof prints above a report.
type ProfileInfo struct {
	// File is the base name of the main binary (the first mapping's file), or "".
	File string `json:"file"`
	// BuildID is the main binary's build ID, or "".
	BuildID string `json:"build_id"`
	// Comments are the profile's comments, in order, without those starting with '#'.
	Comments []string `json:"comments"`
	// TimeNanos is when the profile was collected, in nanoseconds since the Unix epoch; 0 if unknown.
	TimeNanos int64 `json:"time_nanos"`
	// DurationNanos is how long the profile covers, in nanoseconds; 0 if unknown.
	DurationNanos int64 `json:"duration_nanos"`
	// PeriodType and Period say what one sample stands for: a CPU profile's 10000000
	// cpu/nanoseconds, a heap profile's sampling rate in space/bytes (1: every allocation
	// was recorded). Period is 0 and PeriodType empty if the profile does not say.
	PeriodType SampleType `json:"period_type"`
	Period     int64      `json:"period"`
}

// EffectiveOptions are the effective options of a report, after defaults were applied.
type EffectiveOptions struct {
	// SampleIndex is the 0-based index of the sample type the report reads.
	SampleIndex int `json:"sample_index"`
	// Mean divides each value by the sample count (sample type 0).
	Mean bool `json:"mean"`
	// Granularity is one of functions, filefunctions, files, lines, addresses.
	Granularity string `json:"granularity"`
	// NoInlines attributes inlined frames to their physical caller.
	NoInlines bool `json:"noinlines"`
	// NodeCount caps the number of rows; 0 means no cap.
	NodeCount int `json:"nodecount"`
	// NodeFraction drops nodes whose |cum| is below this fraction of the graph's flat sum.
	NodeFraction float64 `json:"nodefraction"`
	// EdgeFraction drops call edges below this fraction; it only affects the inline labels.
	EdgeFraction float64 `json:"edgefraction"`
	// Sort is "flat" or "cum".
	Sort string `json:"sort"`
	// Filters holds the filters that were set, in the order they were applied.
	Filters []Filter `json:"filters"`
	// RelativePercentages makes percentages relative to the filtered total.
	RelativePercentages bool `json:"relative_percentages"`
	// DropNegative leaves out nodes with a negative flat (or a zero flat and negative cum).
	DropNegative bool `json:"drop_negative"`
}

// Filter is one sample or frame filter as given on the command line.
type Filter struct {
	// Name is the option name in pprof's spelling: focus, ignore, hide, show, show_from,
	// tagfocus, tagignore, prune_from.
	Name string `json:"name"`
	// Value is the expression as given.
	Value string `json:"value"`
}

// Top is the "top" report: pprof's flat/cum table of graph nodes.
type Top struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "top".
	Kind string `json:"kind"`
	// SampleType is the type and unit of every value in the report.
	SampleType SampleType `json:"sample_type"`
	// Total is the denominator of every percentage: the sum of |value| over the samples, taken
	// before filtering unless RelativePercentages is set (under --mean, the overall mean).
	Total int64 `json:"total"`
	// Shown is the sum of the rows' flat values.
	Shown int64 `json:"shown"`
	// ShownPct is 100*Shown/Total, or null when Total is 0.
	ShownPct *float64 `json:"shown_pct"`
	// NodeCutoff is the |cum| threshold below which nodes were dropped (raw sample units); 0 when
	// nothing is cut by nodefraction.
	NodeCutoff int64 `json:"node_cutoff"`
	// DroppedNodes counts the nodes removed by the NodeCutoff.
	DroppedNodes int `json:"dropped_nodes"`
	// CandidateNodes counts the nodes left after the cutoff; Rows holds the first NodeCount of them.
	CandidateNodes int `json:"candidate_nodes"`
	// Options are the effective options.
	Options EffectiveOptions `json:"options"`
	// Profile carries profile-level facts (binary, comments, time, duration).
	Profile ProfileInfo `json:"profile"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as a filter that matched nothing.
	Warnings []string `json:"warnings"`
	// Rows are the nodes in report order.
	Rows []Row `json:"rows"`
}

// Inline labels of a row.
const (
	InlineNone    = ""
	InlineFull    = "inline"
	InlinePartial = "partial-inline"
)

// NodeIdentity is what tells a node, or a frame, apart beyond its printed name: the parts of
// the name the granularity keeps, and the binary and start line of functions without a name.
// Reports embed it, so its fields are theirs in JSON.
type NodeIdentity struct {
	// Function is the function name, or "" when the granularity or the profile has none.
	Function string `json:"function"`
	// File is the source file, or "".
	File string `json:"file"`
	// StartLine is the function's first line when it tells nodes apart: only for a
	// function without a name, where pprof keeps functions of one file starting on different
	// lines as separate nodes with the same printed name. Otherwise 0.
	StartLine int64 `json:"start_line"`
	// Line is the source line, or 0.
	Line int64 `json:"line"`
	// Column is the source column, or 0.
	Column int64 `json:"column"`
	// Address is the instruction address as "0x..." hex, or "" when the granularity drops it.
	Address string `json:"address"`
	// Object is the binary or library the node belongs to when that is part of its identity
	// (frames without function names), or "".
	Object string `json:"object"`
}

// Compare orders identities for rows and frames whose printed names are equal, in the
// order the graph orders its nodes' (graph.NodeInfo): function, file, object, start line,
// line, column, address.
func (a NodeIdentity) Compare(b NodeIdentity) int {
	return cmp.Or(
		cmp.Compare(a.Function, b.Function),
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Object, b.Object),
		cmp.Compare(a.StartLine, b.StartLine),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.Address, b.Address),
	)
}

// Row is one graph node in a top report.
type Row struct {
	// Name is the node's name exactly as pprof prints it.
	Name string `json:"name"`
	// Flat is the value of samples whose leaf is this node (a truncated mean under --mean).
	Flat int64 `json:"flat"`
	// FlatPct is 100*Flat/Total (signed), or null when Total is 0.
	FlatPct *float64 `json:"flat_pct"`
	// SumPct is 100*(running sum of Flat up to this row)/Total (signed), or null when Total is 0.
	SumPct *float64 `json:"sum_pct"`
	// Cum is the value of samples whose stack contains this node, counted once per sample.
	Cum int64 `json:"cum"`
	// CumPct is 100*Cum/Total (signed), or null when Total is 0.
	CumPct *float64 `json:"cum_pct"`
	// Inline is "" , "inline" (every call into the node was inlined) or "partial-inline".
	Inline string `json:"inline"`
	// NodeIdentity tells the node apart beyond its name.
	NodeIdentity
	// FrameType is the type of the node's frames as the profile states it: "kernel",
	// "native", "go", "jvm", "cpython", "v8js"... (OTLP's profile.frame.type), or "" when the
	// profile does not say (pprof profiles never do) or the node's frames disagree.
	FrameType string `json:"frame_type"`
}

// MarshalJSON writes the input with [] for its empty lists, never null, whoever built it.
func (in Input) MarshalJSON() ([]byte, error) {
	type plain Input // without this method
	if in.SampleTypes == nil {
		in.SampleTypes = []SampleType{}
	}
	if in.Warnings == nil {
		in.Warnings = []string{}
	}
	// Not json.Marshal: it escapes <, > and &, which the document's encoder would keep.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(plain(in)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

package report

// KindTraces is the kind of the traces report: every sample's stack, as pprof -traces.
const KindTraces = "traces"

// KindTraceSample is the kind of the sample records of the ndjson form of a traces report;
// its first record is the TracesHeader, of kind KindTraces.
const KindTraceSample = "sample"

// TracesOptions are the effective options of a traces report. pprof's -traces ignores node
// selection and order (nodecount, nodefraction, edgefraction, sort, drop_negative), so they
// have no place here.
type TracesOptions struct {
	// SampleIndex is the 0-based index of the sample type the report reads.
	SampleIndex int `json:"sample_index"`
	// Mean divides each sample's value by its count (sample type 0), truncating.
	Mean bool `json:"mean"`
	// Granularity is one of functions, filefunctions, files, lines, addresses: what the
	// frames were aggregated to before being named.
	Granularity string `json:"granularity"`
	// NoInlines attributes inlined frames to their physical caller.
	NoInlines bool `json:"noinlines"`
	// Filters holds the filters that were set, in the order they were applied.
	Filters []Filter `json:"filters"`
	// RelativePercentages takes Total after filtering instead of before.
	RelativePercentages bool `json:"relative_percentages"`
}

// TracesHeader is everything a traces report says besides its samples. It is the first
// record of the ndjson form, and the JSON document (Traces) starts with the same fields.
type TracesHeader struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "traces".
	Kind string `json:"kind"`
	// SampleType is the type and unit of every sample value.
	SampleType SampleType `json:"sample_type"`
	// Total is the sum of |value| over the samples, taken before filtering unless
	// RelativePercentages is set (under --mean, the overall mean): pprof's "Total samples".
	Total int64 `json:"total"`
	// SampleCount is the number of samples the report lists: those left after filtering
	// whose stack is not empty.
	SampleCount int `json:"sample_count"`
	// Options are the effective options.
	Options TracesOptions `json:"options"`
	// Profile carries profile-level facts (binary, comments, time, duration).
	Profile ProfileInfo `json:"profile"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as a filter that matched nothing.
	Warnings []string `json:"warnings"`
}

// Traces is the "traces" report as one JSON document: the header fields, then the samples.
type Traces struct {
	TracesHeader
	// Samples are the samples in profile order, zero-valued ones included; samples whose
	// stack is empty are left out, as pprof leaves them out.
	Samples []TraceSample `json:"samples"`
}

// TraceSample is one sample of a traces report.
type TraceSample struct {
	// Value is the sample's value in the sample unit; under --mean, the value divided by the
	// sample's count (truncating), or the value itself when the count is 0.
	Value int64 `json:"value"`
	// Labels are the sample's string labels: key -> values in the profile's order.
	Labels map[string][]string `json:"labels"`
	// NumLabels are the sample's numeric labels: key -> values in the profile's order, each
	// with the unit pprof reads the key in (the first unit the profile gives the key; else
	// "bytes" for request and alignment; else the key itself).
	NumLabels map[string][]NumLabel `json:"num_labels"`
	// Frames is the stack, leaf first: one frame per line of each location, inlined lines
	// before the line they were inlined into.
	Frames []Frame `json:"frames"`
}

// NumLabel is one value of a numeric label.
type NumLabel struct {
	// Value is the label's raw value.
	Value int64 `json:"value"`
	// Unit is the unit of Value.
	Unit string `json:"unit"`
}

// TraceRecord is a sample record of the ndjson form: a TraceSample with its kind first.
type TraceRecord struct {
	// Kind is always "sample".
	Kind string `json:"kind"`
	TraceSample
}

// Frame is one frame of a sample's stack.
type Frame struct {
	// ID numbers the distinct frames of one report from 0: frames with equal IDs are equal.
	// It lets renderers encode a frame once however many samples hold it; it is not part of
	// the JSON output.
	ID int32 `json:"-"`
	// Name is the frame's name exactly as pprof -traces prints it, without the inline marker.
	Name string `json:"name"`
	// Inline is true when the frame was inlined into the frame after it (pprof's "(inline)").
	Inline bool `json:"inline"`
	// NodeIdentity tells the frame apart beyond its name, as in a top row; File is
	// cleaned but not trimmed of /proc/self/cwd/ (as -traces).
	NodeIdentity
	// FrameType is the frame's type as the profile states it ("kernel", "native", "jvm"...,
	// OTLP's profile.frame.type), or "" when it does not.
	FrameType string `json:"frame_type"`
}

package report

// KindInfo is the kind of the document profq info writes.
const KindInfo = "info"

// Info is the "info" report: what a profile holds, before any report is made of it.
type Info struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "info".
	Kind string `json:"kind"`
	// Profile describes the profile the other reports read: the inputs combined as profq
	// combines them (common sample types, finest units, merged), with drop_frames applied.
	// With one input it describes that input.
	Profile ProfileDetails `json:"profile"`
	// Inputs describes each input on its own, in argument order.
	Inputs []InfoInput `json:"inputs"`
	// Warnings holds non-fatal problems, such as a numeric label key with several units.
	Warnings []string `json:"warnings"`
}

// InfoInput describes one input of an info report.
type InfoInput struct {
	// Source is the argument as given: a path, or "-" for standard input.
	Source string `json:"source"`
	// Format is what the input was read as: "pprof".
	Format string `json:"format"`
	// Profile describes the input as a report of it alone would read it.
	Profile ProfileDetails `json:"profile"`
}

// ProfileDetails describes one profile.
type ProfileDetails struct {
	// SampleTypes are the profile's sample types, in order.
	SampleTypes []SampleTypeInfo `json:"sample_types"`
	// DefaultSampleType is the profile's own default_sample_type field, or "".
	DefaultSampleType string `json:"default_sample_type"`
	// DefaultSampleIndex is the sample type a report reads without --sample-index: the
	// default sample type when it names one, else the last type.
	DefaultSampleIndex int `json:"default_sample_index"`
	// PeriodType is what Period measures; both strings are "" when the profile has none.
	PeriodType SampleType `json:"period_type"`
	// Period is the sampling period in PeriodType's unit (e.g. 10000000 nanoseconds for
	// a Go CPU profile, 524288 bytes for a heap profile); 0 if unknown.
	Period int64 `json:"period"`
	// TimeNanos is when the profile was collected, in nanoseconds since the Unix epoch; 0 if unknown.
	TimeNanos int64 `json:"time_nanos"`
	// DurationNanos is how long the profile covers, in nanoseconds; 0 if unknown.
	DurationNanos int64 `json:"duration_nanos"`
	// Counts are the sizes of the profile's tables.
	Counts ProfileCounts `json:"counts"`
	// Mappings are the binaries and libraries, in profile order; the first is the main binary.
	Mappings []MappingInfo `json:"mappings"`
	// Labels are the label keys the samples carry, by key.
	Labels []LabelInfo `json:"labels"`
	// Comments are all of the profile's comments, in order.
	Comments []string `json:"comments"`
	// DropFrames is the profile's regexp of frames removed from every stack (with those
	// below them), or "".
	DropFrames string `json:"drop_frames"`
	// KeepFrames is the profile's regexp of frames that DropFrames spares, or "".
	KeepFrames string `json:"keep_frames"`
	// DocURL is the profile's documentation link, or "".
	DocURL string `json:"doc_url"`
	// Symbolization says what --symbolize local did, for each mapping with locations, in
	// profile order; [] without --symbolize local.
	Symbolization []SymbolizedMapping `json:"symbolization"`
}

// SampleTypeInfo is one sample type of a profile with the total of its values.
type SampleTypeInfo struct {
	// Type is the sample type name, e.g. "cpu", "alloc_space".
	Type string `json:"type"`
	// Unit is the unit of its values, e.g. "nanoseconds", "bytes", "count".
	Unit string `json:"unit"`
	// Total is the sum of |value| over the samples: the total of a top report of this type
	// without filters.
	Total int64 `json:"total"`
}

// ProfileCounts are the sizes of a profile's tables.
type ProfileCounts struct {
	// Samples is the number of samples.
	Samples int `json:"samples"`
	// Locations is the number of locations (distinct program counters or frames).
	Locations int `json:"locations"`
	// Functions is the number of functions.
	Functions int `json:"functions"`
	// Mappings is the number of mappings.
	Mappings int `json:"mappings"`
}

// MappingInfo is one mapping of a profile: a binary or library mapped into the process.
type MappingInfo struct {
	// ID is the mapping's ID in the profile.
	ID uint64 `json:"id"`
	// File is the binary's path as recorded, or "" (pprof adds a mapping without a file to
	// profiles that have none).
	File string `json:"file"`
	// BuildID is the binary's build ID, or "".
	BuildID string `json:"build_id"`
	// Start is the first mapped address, as "0x..." hex: addresses do not fit JSON's safe
	// integer range.
	Start string `json:"start"`
	// Limit is the address just past the mapping, as "0x..." hex.
	Limit string `json:"limit"`
	// Offset is the file offset Start is mapped from, as "0x..." hex.
	Offset string `json:"offset"`
	// HasFunctions says the profile names the functions at the mapping's addresses.
	HasFunctions bool `json:"has_functions"`
	// HasFilenames says the profile has their source file names.
	HasFilenames bool `json:"has_filenames"`
	// HasLineNumbers says the profile has their source line numbers.
	HasLineNumbers bool `json:"has_line_numbers"`
	// HasInlineFrames says the profile lists the calls inlined at each address.
	HasInlineFrames bool `json:"has_inline_frames"`
	// FrameType is the type of the mapping's frames as the profile states it ("kernel",
	// "native", "jvm"..., OTLP's profile.frame.type), or "" when it does not.
	FrameType string `json:"frame_type"`
	// Locations counts the profile's locations in this mapping.
	Locations int `json:"locations"`
}

// LabelInfo is one label key of a profile's samples.
type LabelInfo struct {
	// Key is the label key.
	Key string `json:"key"`
	// Numeric says the key has numeric values (a numeric label).
	Numeric bool `json:"numeric"`
	// Unit is the unit pprof reads the numeric values in (see TagKey.Unit); "" for string
	// labels.
	Unit string `json:"unit"`
	// Units are the units the samples state for the key's numeric values, sorted; more than
	// one means pprof reads some values in the wrong unit. [] when none is stated.
	Units []string `json:"units"`
	// Samples counts the samples that carry the key.
	Samples int `json:"samples"`
	// Values counts the key's distinct values.
	Values int `json:"values"`
}

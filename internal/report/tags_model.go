package report

// KindTags is the kind of the document profq tags writes.
const KindTags = "tags"

// Tags is the "tags" report: pprof's -tags, the value of the samples carrying each label
// value, per label key.
type Tags struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "tags".
	Kind string `json:"kind"`
	// SampleType is the type and unit of every weight in the report.
	SampleType SampleType `json:"sample_type"`
	// Total is the denominator of every percentage, as in a top report: the sum of |value|
	// over the samples, before filtering unless RelativePercentages is set; with a diff base,
	// the base samples' sum.
	Total int64 `json:"total"`
	// Options are the effective options.
	Options TagsOptions `json:"options"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as a filter that matched nothing.
	Warnings []string `json:"warnings"`
	// Keys are the label keys in name order.
	Keys []TagKey `json:"keys"`
}

// TagsOptions are the effective options of a tags report.
type TagsOptions struct {
	// SampleIndex is the 0-based index of the sample type the report reads.
	SampleIndex int `json:"sample_index"`
	// Filters holds the filters that were set, in the order they were applied; besides the
	// top report's filters it can hold tagshow and taghide.
	Filters []Filter `json:"filters"`
	// RelativePercentages makes percentages relative to the filtered total.
	RelativePercentages bool `json:"relative_percentages"`
}

// TagKey is one label key and the weight of each of its values.
type TagKey struct {
	// Key is the label key.
	Key string `json:"key"`
	// Numeric says the key has numeric values (a numeric label, such as the bytes label of Go
	// heap profiles). A key could in principle carry string values too; those have a null
	// Number.
	Numeric bool `json:"numeric"`
	// Unit is the unit of the numeric values as pprof reads it: the first unit a sample
	// states for the key; else "bytes" for the keys request and alignment; else the key
	// itself. "" for a key with string values only.
	Unit string `json:"unit"`
	// Total is the sum of the Weight of the key's values. A sample listing several values for
	// the key counts once per value, as in pprof.
	Total int64 `json:"total"`
	// Pct is 100*Total/report Total (signed), or null when the report total is 0.
	Pct *float64 `json:"pct"`
	// Samples counts the samples that carry the key.
	Samples int `json:"samples"`
	// Values are the key's values by |Weight| descending, then Value, then Number.
	Values []TagValue `json:"values"`
}

// TagValue is one value of a label key.
type TagValue struct {
	// Value is the value as pprof names it: the string, or for a numeric value the number
	// scaled to the unit that suits it ("1.50MB"), exactly as pprof -tags prints it by default.
	// Two numbers can share a Value ("1kB" for 1024 and 1025); Number tells them apart.
	Value string `json:"value"`
	// Number is the raw value of a numeric label, in the key's Unit, or null for a string.
	Number *int64 `json:"number"`
	// Weight is the sum of the sample values (signed, not divided by any count) of the
	// samples that carry this value.
	Weight int64 `json:"weight"`
	// Pct is 100*Weight/report Total (signed), or null when the report total is 0.
	Pct *float64 `json:"pct"`
	// Samples counts the samples that carry this value.
	Samples int `json:"samples"`
}

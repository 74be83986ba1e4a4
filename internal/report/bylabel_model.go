package report

// KindTopByLabel is the kind of the document profq top --by-label writes.
const KindTopByLabel = "top_by_label"

// TopByLabel is the "top_by_label" report: one top report per value of a label key, so that
// each handler, tenant or worker has its own flat/cum table.
type TopByLabel struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "top_by_label".
	Kind string `json:"kind"`
	// Key is the label key the samples are grouped by.
	Key string `json:"key"`
	// Numeric says the key has numeric values; their groups carry a Number.
	Numeric bool `json:"numeric"`
	// Unit is the unit of the key's numeric values (see TagKey.Unit), or "".
	Unit string `json:"unit"`
	// SampleType is the type and unit of every value in the report.
	SampleType SampleType `json:"sample_type"`
	// Total is the whole profile's total, as a top report with the same options has it: the
	// sum of |value| over the samples, before filtering unless RelativePercentages is set.
	Total int64 `json:"total"`
	// Options are the effective options; every group is built with them.
	Options EffectiveOptions `json:"options"`
	// Profile carries profile-level facts (binary, comments, time, duration).
	Profile ProfileInfo `json:"profile"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as a filter that matched nothing or a key no
	// sample carries.
	Warnings []string `json:"warnings"`
	// Groups are the label values by GroupTotal descending, then value.
	Groups []LabelGroup `json:"groups"`
}

// LabelGroup is the top report of the samples that carry one value of the label, or of the
// samples that do not carry the label at all. Its fields from Total on are those of the top
// report `profq top --tagfocus 'KEY=^VALUE$'` (for the unlabelled group, `--tagignore
// 'KEY=.*'`) with the same options would have.
type LabelGroup struct {
	// Value is the label value as pprof names it (the string, or the scaled number such as
	// "1.50MB"); "" for the group of samples without the label.
	Value string `json:"value"`
	// Number is the raw value of a numeric label in the key's Unit; null for a string value
	// and for the unlabelled group.
	Number *int64 `json:"number"`
	// HasLabel is false for the group of samples that do not carry the key.
	HasLabel bool `json:"has_label"`
	// Samples counts the group's samples, after filtering.
	Samples int `json:"samples"`
	// GroupTotal is the sum of |value| over the group's samples after filtering (under --mean,
	// their mean): how much of the profile the group holds.
	GroupTotal int64 `json:"group_total"`
	// GroupPct is 100*GroupTotal/Total of the whole report, or null when that is 0. The
	// groups' percentages add up to the share of the filtered samples, unless samples carry
	// several values of the key (they then count in each of their groups).
	GroupPct *float64 `json:"group_pct"`
	// Total is the denominator of the group's percentages: the report's Total, or under
	// --relative-percentages the group's own GroupTotal.
	Total int64 `json:"total"`
	// Shown is the sum of the rows' flat values.
	Shown int64 `json:"shown"`
	// ShownPct is 100*Shown/Total, or null when Total is 0.
	ShownPct *float64 `json:"shown_pct"`
	// NodeCutoff is the |cum| threshold below which the group's nodes were dropped; each
	// group is trimmed on its own, against its own flat sum.
	NodeCutoff int64 `json:"node_cutoff"`
	// DroppedNodes counts the nodes removed by the NodeCutoff.
	DroppedNodes int `json:"dropped_nodes"`
	// CandidateNodes counts the nodes left after the cutoff; Rows holds the first NodeCount.
	CandidateNodes int `json:"candidate_nodes"`
	// Rows are the group's nodes in report order, as in a top report.
	Rows []Row `json:"rows"`
}

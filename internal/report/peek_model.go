package report

// KindPeek is the kind of the peek report.
const KindPeek = "peek"

// Peek is the "peek" report: the callers and callees of the call-graph nodes whose names match
// a regular expression, as pprof -peek prints them.
type Peek struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "peek".
	Kind string `json:"kind"`
	// Regexp is the expression the node names were matched against, as given.
	Regexp string `json:"regexp"`
	// SampleType is the type and unit of every value in the report.
	SampleType SampleType `json:"sample_type"`
	// Total is the denominator of the nodes' percentages, as in a top report.
	Total int64 `json:"total"`
	// Shown is the sum of the flat values of every node of the graph, matched or not, as
	// pprof's "Showing nodes accounting for" line reports it.
	Shown int64 `json:"shown"`
	// ShownPct is 100*Shown/Total, or null when Total is 0.
	ShownPct *float64 `json:"shown_pct"`
	// GraphNodes counts the nodes of the graph the callers and callees come from, before the
	// regular expression picks the entries.
	GraphNodes int `json:"graph_nodes"`
	// NodeCutoff, DroppedNodes and CandidateNodes describe the trimming as in a top report;
	// peek trims nothing unless --nodefraction or --nodecount asks.
	NodeCutoff     int64 `json:"node_cutoff"`
	DroppedNodes   int   `json:"dropped_nodes"`
	CandidateNodes int   `json:"candidate_nodes"`
	// Options are the effective options.
	Options EffectiveOptions `json:"options"`
	// Profile carries profile-level facts (binary, comments, time, duration).
	Profile ProfileInfo `json:"profile"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as a filter that matched nothing.
	Warnings []string `json:"warnings"`
	// Entries are the matched nodes in report order.
	Entries []PeekEntry `json:"entries"`

	// UnitBasis is the smallest non-zero |flat| (else |cum|) over every node of the graph,
	// from which the table picks its unit as pprof does; it is not part of the JSON document.
	UnitBasis int64 `json:"-"`
}

// PeekEntry is one matched node with the calls into and out of it.
type PeekEntry struct {
	// Row holds the node's values as a top report's row does; its SumPct runs over the
	// matched nodes only, as pprof's peek prints it.
	Row
	// Callers are the edges into the node, heaviest first.
	Callers []PeekEdge `json:"callers"`
	// Callees are the edges out of the node, heaviest first.
	Callees []PeekEdge `json:"callees"`
}

// PeekEdge is one caller or callee of a matched node.
type PeekEdge struct {
	// Name is the printed name of the node at the other end of the edge.
	Name string `json:"name"`
	// Weight is the value of the samples whose stack makes this call, counted once per sample.
	// Under --mean it is not divided: pprof's peek prints the sum.
	Weight int64 `json:"weight"`
	// Pct is 100*Weight/Cum of the matched node (signed), or null when that cum is 0.
	Pct *float64 `json:"pct"`
	// Inline says that every call along the edge was inlined.
	Inline bool `json:"inline"`
	// Residual says that trimmed nodes sit between the two ends: the edge stands for a path.
	Residual bool `json:"residual"`
}

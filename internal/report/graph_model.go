package report

// KindGraph is the kind of the graph report.
const KindGraph = "graph"

// GraphReport is the "graph" report: the trimmed call graph that pprof draws with -dot, its nodes and
// the call edges between them.
type GraphReport struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "graph".
	Kind string `json:"kind"`
	// SampleType is the type and unit of every value in the report.
	SampleType SampleType `json:"sample_type"`
	// Total is the denominator of every percentage, as in a top report.
	Total int64 `json:"total"`
	// Shown is the sum of the nodes' flat values.
	Shown int64 `json:"shown"`
	// ShownPct is 100*Shown/Total, or null when Total is 0.
	ShownPct *float64 `json:"shown_pct"`
	// NodeCutoff, DroppedNodes and CandidateNodes describe the node trimming as in a top report.
	NodeCutoff     int64 `json:"node_cutoff"`
	DroppedNodes   int   `json:"dropped_nodes"`
	CandidateNodes int   `json:"candidate_nodes"`
	// EdgeCutoff is the |weight| below which edges were dropped (raw sample units); 0 when
	// the cutoff is off.
	EdgeCutoff int64 `json:"edge_cutoff"`
	// DroppedEdges counts the edges below EdgeCutoff as pprof's legend reports them.
	DroppedEdges int `json:"dropped_edges"`
	// Options are the effective options; Sort is "entropy".
	Options EffectiveOptions `json:"options"`
	// Profile carries profile-level facts (binary, comments, time, duration).
	Profile ProfileInfo `json:"profile"`
	// Inputs lists the profiles the report was built from, in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as a filter that matched nothing.
	Warnings []string `json:"warnings"`
	// Nodes are the graph's nodes in pprof's dot order, with ids 1, 2, ...
	Nodes []GraphNode `json:"nodes"`
	// Edges are the call edges between the nodes, heaviest first.
	Edges []GraphEdge `json:"edges"`
}

// GraphNode is one node of the graph.
type GraphNode struct {
	// ID identifies the node in edges: its 1-based position in Nodes.
	ID int `json:"id"`
	// Row holds the node's values as a top report's row does.
	Row
}

// GraphEdge is one call edge of the graph.
type GraphEdge struct {
	// From is the id of the caller node.
	From int `json:"from"`
	// To is the id of the callee node.
	To int `json:"to"`
	// Weight is the value of the samples whose stack makes this call, counted once per
	// sample; under --mean, their mean, as flat and cum.
	Weight int64 `json:"weight"`
	// Inline says that every call along the edge was inlined.
	Inline bool `json:"inline"`
	// Residual says that trimmed nodes sit between the two ends: the edge stands for a path.
	Residual bool `json:"residual"`
}

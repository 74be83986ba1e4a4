package report

import "github.com/profq/profq/internal/gate"

// Diff is the "diff" report: every node of two sets of captures side by side, with the change
// of its flat and cum values and of its share of the total, and the verdict of the gate.
type Diff struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "diff".
	Kind string `json:"kind"`
	// SampleType is the type and unit of every value in the report; both sides have it.
	SampleType SampleType `json:"sample_type"`
	// BaseCaptures and NewCaptures count the captures on each side.
	BaseCaptures int `json:"base_captures"`
	NewCaptures  int `json:"new_captures"`
	// Statistics is true when both sides have at least two captures: changes then carry a
	// Mann-Whitney U test (Stats), as benchstat reports one.
	Statistics bool `json:"statistics"`
	// Work gives the benchmark iterations each capture ran, when the benchmarks' outputs were
	// given (--base-bench, --new-bench); null otherwise.
	Work *Work `json:"work"`
	// Total compares the profile totals (the denominators of the shares). It is never
	// normalized.
	Total Change `json:"total"`
	// NodeCutoff is, per side, the |cum| below which a node counts as small (raw sample units):
	// nodes small on both sides are left out. 0 when --nodefraction is 0.
	NodeCutoff SidePair `json:"node_cutoff"`
	// DroppedNodes counts the nodes left out by the cutoff.
	DroppedNodes int `json:"dropped_nodes"`
	// CandidateNodes counts the nodes after the cutoff; the rules watch all of them, and Rows
	// holds the first NodeCount of them.
	CandidateNodes int `json:"candidate_nodes"`
	// Options are the effective options.
	Options DiffOptions `json:"options"`
	// Inputs lists the captures, the base side first, each in argument order.
	Inputs []Input `json:"inputs"`
	// Warnings holds non-fatal problems, such as too few captures for a significant result.
	Warnings []string `json:"warnings"`
	// Verdict is the outcome of the --fail-on rules.
	Verdict Verdict `json:"verdict"`
	// Rows are the nodes, largest change first.
	Rows []DiffRow `json:"rows"`
}

// SidePair is one number for each side of a diff.
type SidePair struct {
	Base int64 `json:"base"`
	New  int64 `json:"new"`
}

// DiffOptions are the effective options of a diff report.
type DiffOptions struct {
	// Mean divides each value by the sample count (sample type 0).
	Mean bool `json:"mean"`
	// Granularity is one of functions, filefunctions, files, lines, addresses.
	Granularity string `json:"granularity"`
	// NoInlines attributes inlined frames to their physical caller.
	NoInlines bool `json:"noinlines"`
	// NodeCount caps the number of rows; 0 means no cap. The rules see every candidate node.
	NodeCount int `json:"nodecount"`
	// NodeFraction leaves out nodes whose |cum| is below this fraction of the total on both
	// sides.
	NodeFraction float64 `json:"nodefraction"`
	// Sort is "flat" or "cum": the value whose |delta| orders the rows.
	Sort string `json:"sort"`
	// Filters holds the filters that were set, in the order they were applied.
	Filters []Filter `json:"filters"`
	// RelativePercentages takes each side's total after filtering.
	RelativePercentages bool `json:"relative_percentages"`
	// Normalize scales every capture to the base's total, so that changes are changes of share.
	Normalize bool `json:"normalize"`
	// Paired is true when the i-th base and the i-th new capture were compared as a pair
	// (taken back to back): sampled values are tested on the pairs' differences.
	Paired bool `json:"paired"`
	// Alpha is the gate's error rate: the family-wise error rate of its regression tests, and
	// the error rate of each test that rules a change out.
	Alpha float64 `json:"alpha"`
	// MinDelta is the noise floor in raw sample units: a smaller change breaks no rule.
	MinDelta float64 `json:"min_delta"`
	// FailOn are the gate's rules, in canonical form.
	FailOn []string `json:"fail_on"`
	// Watch are the --watch regexps: the rules watch only nodes whose name matches one of
	// them; [] watches every node.
	Watch []string `json:"watch"`
}

// Work is the benchmark iterations of every capture, from the benchmarks' outputs: each
// capture's values are scaled to the same number of iterations, Reference, so that captures
// of time-based benchmarks (go test -benchtime 2s), which run as many iterations as the
// machine allows, compare the cost of the same work.
type Work struct {
	// Benchmark is the benchmark's name, as its output prints it.
	Benchmark string `json:"benchmark"`
	// Base and New are the iterations of each capture, in argument order.
	Base []int64 `json:"base"`
	New  []int64 `json:"new"`
	// Reference is the median of Base: every value of the report is per Reference iterations.
	Reference int64 `json:"reference"`
}

// Node statuses in a diff.
const (
	StatusBoth     = "both"     // the node is in the base and in the new profiles
	StatusAppeared = "appeared" // the node is in no base capture
	StatusVanished = "vanished" // the node is in no new capture
)

// DiffRow is one node of a diff.
type DiffRow struct {
	// Name is the node's name exactly as pprof prints it.
	Name string `json:"name"`
	// NodeIdentity identifies the node as in a top row.
	NodeIdentity
	// FrameType is the type of the node's frames, as in a top row, when every capture that
	// has the node agrees; otherwise "".
	FrameType string `json:"frame_type"`
	// Status is "both", "appeared" or "vanished".
	Status string `json:"status"`
	// Flat compares the node's flat values.
	Flat Change `json:"flat"`
	// Cum compares the node's cum values.
	Cum Change `json:"cum"`
}

// Change compares one value between the base and the new side.
type Change struct {
	// Change is the values on each side and their shares (base, new, delta, delta_pct,
	// base_share, new_share, share_delta_pp in JSON), what the gate's rules read.
	gate.Change
	// Stats is the significance test over the captures, or null unless Diff.Statistics.
	Stats *Stats `json:"stats"`
	// Effect is the change estimated from every capture with its confidence interval, as the
	// gate sees it; null where it cannot be estimated: for a node absent from every base
	// capture, or with one capture per side of values that carry sampling noise.
	Effect *Effect `json:"effect"`
}

// Stats is a Mann-Whitney U test of the per-capture values of both sides.
type Stats struct {
	// Base and New summarize the values of each side.
	Base Spread `json:"base"`
	New  Spread `json:"new"`
	// PValue is the two-sided p-value that both sides come from one distribution.
	PValue float64 `json:"p_value"`
	// Significant is PValue < alpha.
	Significant bool `json:"significant"`
}

// Spread is the per-capture values of one side.
type Spread struct {
	// Values holds the value of each capture, in argument order (0 where the node is absent).
	Values []int64 `json:"values"`
	// Median is the median of Values (the mean of the middle two for an even count).
	Median float64 `json:"median"`
	// Min and Max are the extremes of Values.
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// The gate's verdict and what it is made of are internal/gate's: the model holds them as they
// are, rules typed (they marshal to their canonical text).
type (
	Verdict   = gate.Verdict
	Violation = gate.Violation
	Undecided = gate.Undecided
	Effect    = gate.Effect
)

// Verdict statuses.
const (
	VerdictPass         = gate.VerdictPass
	VerdictRegression   = gate.VerdictRegression
	VerdictInconclusive = gate.VerdictInconclusive
)

// Verdict methods.
const (
	MethodExact      = gate.MethodExact
	MethodModeratedT = gate.MethodModeratedT
	MethodNone       = gate.MethodNone
)

// Metrics a violation can be about.
const (
	MetricTotal = gate.MetricTotal
	MetricFlat  = gate.MetricFlat
	MetricCum   = gate.MetricCum
)
